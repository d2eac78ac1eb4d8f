package swift

import "testing"

// TestNestedNamesHaveNoSugar checks the rule of NodePrinter that a name
// nested in a specialization's parameters (a propagated closure or
// function, a global) is printed by demangleSymbolAsString with the default
// options, without sugar: Swift.Array<X>, Swift.Optional<X> and
// Swift.Dictionary<K, V> there, [X] in the outer name. The names are
// swiftlint 0.57.1's (darwin-arm64), 927 of which have such a nested name.
func TestNestedNamesHaveNoSugar(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{
			"_$sSr15_stableSortImpl2byySbx_xtKXE_tKFSaySSG_Tg573$s13SwiftLintCore13ConfigurationV16cacheDescriptionSSvgSbSaySSG_AEtXEfU0_Tf1cn_n",
			"function signature specialization <Arg[0] = [Closure Propagated : closure #2 (Swift.Array<Swift.String>, Swift.Array<Swift.String>) -> Swift.Bool in SwiftLintCore.Configuration.cacheDescription.getter : Swift.String, Argument Types : []> of generic specialization <[Swift.String]> of Swift.UnsafeMutableBufferPointer._stableSortImpl(by: (A, A) throws -> Swift.Bool) throws -> ()",
		},
		{
			"_$ss17_NativeDictionaryV9mapValuesyAByxqd__Gqd__q_KXEKlFSS_SaySdGSdTg563$s13SwiftLintCore15CustomRuleTimerC4dumpSDySSSdGyFSdSaySdGXEfU_Tf1cn_n",
			"function signature specialization <Arg[0] = [Closure Propagated : closure #1 (Swift.Array<Swift.Double>) -> Swift.Double in SwiftLintCore.CustomRuleTimer.dump() -> Swift.Dictionary<Swift.String, Swift.Double>, Argument Types : []> of generic specialization <Swift.String, [Swift.Double], Swift.Double> of Swift._NativeDictionary.mapValues<A>((B) throws -> A1) throws -> Swift._NativeDictionary<A, A1>",
		},
		{
			"_$sSTsE5first5where7ElementQzSgSbADKXE_tKF14ArgumentParser0D3SetV_Tg504$s14d59Parser21ErrorMessageGeneratorV9valueName3forSSSgAA0G0O_tFSbO19A10DefinitionVXEfU_AF4NameOTf1ncn_nTm",
			"merged function signature specialization <Arg[1] = [Closure Propagated : closure #1 (ArgumentParser.ArgumentDefinition) -> Swift.Bool in ArgumentParser.ErrorMessageGenerator.valueName(for: ArgumentParser.Name) -> Swift.Optional<Swift.String>, Argument Types : [ArgumentParser.Name]> of generic specialization <ArgumentParser.ArgumentSet> of (extension in Swift):Swift.Sequence.first(where: (A.Element) throws -> Swift.Bool) throws -> A.Element?",
		},
	} {
		if got, ok := Demangle(c.in); !ok || got != c.want {
			t.Errorf("Demangle(%s)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
