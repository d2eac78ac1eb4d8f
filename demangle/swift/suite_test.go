package swift

import "testing"

// TestSwiftTestSuite runs the names of Swift's other demangler tests
// (test/Demangle in swiftlang/swift) with the output they expect, and
// accessors no corpus holds with what Swift 6.3.1's demangler prints.
func TestSwiftTestSuite(t *testing.T) {
	for _, c := range []struct{ file, in, want string }{
		{"Inputs/manglings-with-clang-types.txt", "$s3tmp1fyySiyXzC9_ZTSPFmvEF",
			`tmp.f(@convention(c, mangledCType: "_ZTSPFmvE") () -> Swift.Int) -> ()`},
		{"Inputs/manglings-with-clang-types.txt", "$s3tmp1hyyySbXzB24_ZTSU13block_pointerFvaEF",
			`tmp.h(@convention(block, mangledCType: "_ZTSU13block_pointerFvaE") (Swift.Bool) -> ()) -> ()`},
		{"demangle-embedded.swift", "$e4main8MyStructV3fooyyFAA1XV_Tg5",
			"generic specialization <main.X> of main.MyStruct.foo() -> ()"},
		{"rdar189410068.test", "$s1aLlfMf", ""},
		{"Swift 6.3.1", "$s4main1XV1vSivb", "main.X.v.borrow : Swift.Int"},
		{"Swift 6.3.1", "$s4main1XV1vSivz", "main.X.v.mutate : Swift.Int"},
	} {
		got, ok := Demangle(c.in)
		if c.want == "" {
			if ok {
				t.Errorf("%s: Demangle(%s) = %q, want not demangled", c.file, c.in, got)
			}
			continue
		}
		if !ok || got != c.want {
			t.Errorf("%s: Demangle(%s) = %q, want %q", c.file, c.in, got, c.want)
		}
	}
}
