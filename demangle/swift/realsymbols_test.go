package swift

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestRealSymbols demangles a sample of a real Swift binary's symbols and
// compares both forms with what Swift's own demangler (6.3.1) prints for
// them; a name it does not read (the "Tgm" specializations) stays raw.
func TestRealSymbols(t *testing.T) {
	f, err := os.Open("testdata/swiftlint-symbols.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, bad := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		cols := strings.Split(l, "\t")
		if len(cols) != 3 {
			t.Fatalf("malformed line %q", l)
		}
		n++
		for _, c := range []struct {
			form      string
			demangle  func(string) (string, bool)
			want, got string
		}{
			{form: "full", demangle: Demangle, want: cols[1]},
			{form: "simplified", demangle: Simplified, want: cols[2]},
		} {
			got, ok := c.demangle(cols[0])
			if !ok {
				got = cols[0]
			}
			if got != c.want {
				bad++
				if bad <= 10 {
					t.Errorf("%s %s\n got %s\nwant %s", c.form, cols[0], got, c.want)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 2000 {
		t.Fatalf("%d symbols read, want the 2,001 of the sample", n)
	}
	if bad > 0 {
		t.Errorf("%d of %d demanglings differ from Swift's", bad, 2*n)
	}
}
