package swift

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestRealSymbols demangles a sample of a real Swift binary's symbols:
// every one must demangle in both forms, except the specializations with
// removed metatype parameters ("Tgm"), which Swift's own demangler does not
// read either. No demangler of Swift's runs here to compare the text with.
func TestRealSymbols(t *testing.T) {
	f, err := os.Open("testdata/swiftlint-symbols.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, raw := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		s := sc.Text()
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		n++
		full, ok := Demangle(s)
		simple, sok := Simplified(s)
		if strings.Contains(s, "Tgm") {
			raw++
			if ok || sok {
				t.Errorf("%s: demangled to %q, Swift does not read Tgm", s, full)
			}
			continue
		}
		if !ok || !sok || full == "" || simple == "" {
			t.Errorf("%s: not demangled (full %q, simplified %q)", s, full, simple)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 2000 {
		t.Fatalf("%d symbols read, want the 2,001 of the sample", n)
	}
	t.Logf("%d symbols, %d Tgm left raw", n, raw)
}
