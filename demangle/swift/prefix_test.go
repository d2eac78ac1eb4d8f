package swift

import "testing"

// TestPrefixLen: each of Swift's symbol prefixes is told by its length,
// and names that only begin like one are not Swift's.
func TestPrefixLen(t *testing.T) {
	for s, want := range map[string]int{
		"_T0SiD": 3, "$SSiD": 2, "_$SSiD": 3, "$sSiD": 2, "_$sSiD": 3, "$eSiD": 2, "_$eSiD": 3,
		"@__swiftmacro_1a": 14, "$": 0, "$x": 0, "_$": 0, "_$x": 0, "_T": 0, "_T1": 0, "_Z3foov": 0,
		"@__swiftmacro": 0, "": 0, "s": 0, "__$s": 0,
	} {
		if got := prefixLen(s); got != want {
			t.Errorf("prefixLen(%q) = %d, want %d", s, got, want)
		}
	}
}
