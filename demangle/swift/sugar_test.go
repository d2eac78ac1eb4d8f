package swift

import "testing"

// TestNestedNamesHaveNoSugar checks NodePrinter's rule for a name nested in
// a specialization's parameters: a propagated function or global is
// printed by demangleSymbolAsString with the default options, without
// sugar (Swift.Array<X>, Swift.Optional<X>, Swift.Dictionary<K, V> there,
// [X] in the outer name); a propagated closure's name is printed as it is
// mangled (Swift 6.3). The names are swiftlint 0.57.1's (darwin-arm64), the
// expected text Swift 6.3.1's own demangler's.
func TestNestedNamesHaveNoSugar(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{
			"_$s4Yams4NodeO6ScalarVSbSgIeggd_AEypSgIegnr_TR045$s4Yams11ConstructorC13SwiftLintCoreE15customc67Map33_877979CCD632482CAFEB7462D69D7BF0LL3envSDyAA3TagC4NameVypSgAA4b20O0G0VcGSDyS2SG_tFZSbY6APcfu_Tf3nnpf_n",
			"function signature specialization <Arg[2] = [Constant Propagated Function : implicit closure #1 (Yams.Node.Scalar) -> Swift.Optional<Swift.Bool> in static (extension in SwiftLintCore):Yams.Constructor.(customScalarMap in _877979CCD632482CAFEB7462D69D7BF0)(env: Swift.Dictionary<Swift.String, Swift.String>) -> Swift.Dictionary<Yams.Tag.Name, (Yams.Node.Scalar) -> Swift.Optional<Any>>]> of reabstraction thunk helper from @escaping @callee_guaranteed (@guaranteed Yams.Node.Scalar) -> (@unowned Swift.Bool?) to @escaping @callee_guaranteed (@in_guaranteed Yams.Node.Scalar) -> (@out Any?)",
		},
		{
			"_$sSay11SwiftSyntax16AbsolutePositionVGIgo_ADIegr_TR04$s21a143LintBuiltInRules23DuplicateConditionsRuleV7Visitor33_F96BCFA954364B4AE1AD9F2657483E17LLC9visitPostyy0A6Syntax014SwitchCaseListS0VFySDySSSayAH16cD29VGGz_AH0tuS0VtXEfU0_AMyXEfu0_Tf3npf_n",
			"function signature specialization <Arg[1] = [Constant Propagated Function : implicit closure #2 () -> Swift.Array<SwiftSyntax.AbsolutePosition> in closure #2 (inout Swift.Dictionary<Swift.String, Swift.Array<SwiftSyntax.AbsolutePosition>>, SwiftSyntax.SwitchCaseSyntax) -> () in SwiftLintBuiltInRules.DuplicateConditionsRule.(Visitor in _F96BCFA954364B4AE1AD9F2657483E17).visitPost(SwiftSyntax.SwitchCaseListSyntax) -> ()]> of reabstraction thunk helper from @callee_guaranteed () -> (@owned [SwiftSyntax.AbsolutePosition]) to @escaping @callee_guaranteed () -> (@out [SwiftSyntax.AbsolutePosition])",
		},
		{
			"_$sSr15_stableSortImpl2byySbx_xtKXE_tKFSaySSG_Tg573$s13SwiftLintCore13ConfigurationV16cacheDescriptionSSvgSbSaySSG_AEtXEfU0_Tf1cn_n",
			"function signature specialization <Arg[0] = [Closure Propagated : $s13SwiftLintCore13ConfigurationV16cacheDescriptionSSvgSbSaySSG_AEtXEfU0_, Argument Types : []> of generic specialization <[Swift.String]> of Swift.UnsafeMutableBufferPointer._stableSortImpl(by: (A, A) throws -> Swift.Bool) throws -> ()",
		},
	} {
		if got, ok := Demangle(c.in); !ok || got != c.want {
			t.Errorf("Demangle(%s)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
