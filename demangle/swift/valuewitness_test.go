package swift

import "testing"

// swiftValueWitnesses is Swift's include/swift/Demangling/ValueWitnessMangling.def:
// each value witness's two-letter mangling and its name, which NodePrinter
// prints with a lower-case first letter.
var swiftValueWitnesses = []struct{ mangling, name string }{
	{"al", "AllocateBuffer"}, {"ca", "AssignWithCopy"}, {"ta", "AssignWithTake"},
	{"de", "DeallocateBuffer"}, {"xx", "Destroy"}, {"XX", "DestroyBuffer"},
	{"Xx", "DestroyArray"}, {"CP", "InitializeBufferWithCopyOfBuffer"},
	{"Cp", "InitializeBufferWithCopy"}, {"cp", "InitializeWithCopy"},
	{"Tk", "InitializeBufferWithTake"}, {"tk", "InitializeWithTake"}, {"pr", "ProjectBuffer"},
	{"TK", "InitializeBufferWithTakeOfBuffer"}, {"Cc", "InitializeArrayWithCopy"},
	{"Tt", "InitializeArrayWithTakeFrontToBack"}, {"tT", "InitializeArrayWithTakeBackToFront"},
	{"xs", "StoreExtraInhabitant"}, {"xg", "GetExtraInhabitantIndex"}, {"ug", "GetEnumTag"},
	{"up", "DestructiveProjectEnumData"}, {"ui", "DestructiveInjectEnumTag"},
	{"et", "GetEnumTagSinglePayload"}, {"st", "StoreEnumTagSinglePayload"},
}

// TestValueWitnessKinds checks every value witness Swift mangles, in both
// manglings and both forms, and that no other two letters are one.
func TestValueWitnessKinds(t *testing.T) {
	if len(valueWitnessKinds.get()) != len(swiftValueWitnesses) {
		t.Errorf("%d value witness manglings, Swift has %d", len(valueWitnessKinds.get()), len(swiftValueWitnesses))
	}
	for _, w := range swiftValueWitnesses {
		name := string(w.name[0]+'a'-'A') + w.name[1:]
		for _, c := range []struct{ in, full, simplified string }{
			{"$s4main1SVw" + w.mangling, name + " value witness for main.S", name + " for S"},
			{"_Tw" + w.mangling + "V4main1S", name + " value witness for main.S", name + " for S"},
		} {
			if got, ok := Demangle(c.in); !ok || got != c.full {
				t.Errorf("Demangle(%s) = %q, want %q", c.in, got, c.full)
			}
			if got, ok := Simplified(c.in); !ok || got != c.simplified {
				t.Errorf("Simplified(%s) = %q, want %q", c.in, got, c.simplified)
			}
		}
	}
	// Real symbols from swiftlint 0.57.1 (darwin-arm64): 1,531 of its
	// names end in "wst", 72 more in "wstTm".
	for in, want := range map[string]string{
		"$s11SwiftParser0B0V0A7VersionOwst":         "storeEnumTagSinglePayload value witness for SwiftParser.Parser.SwiftVersion",
		"_$s11SwiftParser17StringLiteralKindOwstTm": "merged storeEnumTagSinglePayload value witness for SwiftParser.StringLiteralKind",
	} {
		if got, ok := Demangle(in); !ok || got != want {
			t.Errorf("Demangle(%s) = %q, want %q", in, got, want)
		}
	}
	for _, s := range []string{"$s4main1SVwei", "$s4main1SVwzz", "_TweiV4main1S"} {
		if got, ok := Demangle(s); ok {
			t.Errorf("Demangle(%s) = %q, want not demangled", s, got)
		}
	}
}
