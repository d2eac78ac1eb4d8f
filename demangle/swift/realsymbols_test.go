package swift

import (
	"bufio"
	"math/rand/v2"
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

// BenchmarkRealSymbols demangles the sample of swiftlint's symbols in both
// forms, as macprof symbolize and a profile's names do.
func BenchmarkRealSymbols(b *testing.B) {
	names := realSymbolNames(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range names {
			Demangle(s)
			Simplified(s)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2*len(names)), "ns/name")
}

// TestPooledParsersAllocateLittle: a name demangled again reuses the
// parser, its nodes and child lists (demanglers), and allocates only
// what its printing does (not counted under the race detector, whose
// sync.Pool drops items at random).
func TestPooledParsersAllocateLittle(t *testing.T) {
	const name = "$s21SwiftLintBuiltInRules24MissingDocsConfigurationV20parameterDescription0aB4Core04RulehJ0VSgvg"
	if _, ok := Demangle(name); !ok {
		t.Fatalf("%s not demangled", name)
	}
	if a := testing.AllocsPerRun(200, func() { Demangle(name) }); a > 4 && !raceEnabled {
		t.Errorf("%v allocations a name, want at most 4 (the printer's)", a)
	}
}

// TestPooledParsersMatchFresh: the sample's names, in shuffled order so
// that each parser comes back from the pool with another name's nodes,
// demangle as a new parser demangles them, in both forms.
func TestPooledParsersMatchFresh(t *testing.T) {
	names := realSymbolNames(t)
	names = append(names, benchNames...)
	r := rand.New(rand.NewPCG(1, 2))
	for range 2 {
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		for _, s := range names {
			for _, o := range []options{fullOptions, simplifiedOptions} {
				name := strings.TrimPrefix(s, "_")
				if !strings.HasPrefix(s, "__") {
					name = s
				}
				if got, want := demangleAsString(s, o), nodeToString(demangleSymbol(name), o); got != want {
					t.Fatalf("%s: %q by a pooled parser, %q by a new one", s, got, want)
				}
			}
		}
	}
}

// realSymbolNames returns the mangled names of the sample of swiftlint's
// symbols.
func realSymbolNames(tb testing.TB) []string {
	data, err := os.ReadFile("testdata/swiftlint-symbols.tsv")
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(string(data), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			names = append(names, strings.SplitN(l, "\t", 2)[0])
		}
	}
	return names
}
