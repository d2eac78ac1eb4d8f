package swift

import (
	"strings"
	"testing"
	"time"
)

// TestHostile checks that names built to be deep, long or exponential in
// print size end quickly, unprinted or bounded, and never panic.
func TestHostile(t *testing.T) {
	// Each tuple holds the previous one twice: the print doubles per level.
	exp := "$sSi"
	for i := 0; i < 40; i++ {
		exp += "_AAt" // (prev, prev)
	}
	cases := map[string]string{
		"deep optional":      "$sSi" + strings.Repeat("Sg", 20000) + "D",
		"long identifier":    "$s" + strings.Repeat("9", 1000) + "a",
		"huge repeat":        "$sSi99999999A",
		"many substitutions": "$sSi" + strings.Repeat("2047A", 100) + "D",
		"exponential tuple":  exp + "D",
		"too long":           "$s" + strings.Repeat("4main", maxNameLen),
		"punycode overflow":  "$s00zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
		"generic params":     "$s1a1fyyr999999999_lF",
		"old deep inout":     "_Tt" + strings.Repeat("R", 5000) + "Si",
		"old deep tuple":     "_Tt" + strings.Repeat("T", 5000) + strings.Repeat("_", 5000),
		"old substitutions":  "_TtT" + strings.Repeat("S_", 5000) + "_",
	}
	for name, s := range cases {
		start := time.Now()
		for _, o := range []options{fullOptions, simplifiedOptions} {
			out := demangleUnguarded(s, o)
			if len(out) > maxOutput {
				t.Errorf("%s: %d bytes out", name, len(out))
			}
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
	}
}

// TestExamples checks names of the kinds profiles show, in both forms,
// against swift demangle's output for them.
func TestExamples(t *testing.T) {
	for _, c := range []struct{ in, full, simplified string }{
		{"$s4main5greetyySiF", "main.greet(Swift.Int) -> ()", "greet(_:)"},
		{"_$s4main5greetyySiF", "main.greet(Swift.Int) -> ()", "greet(_:)"},
		{"$s4main3FooV3bar1xSSSi_tF", "main.Foo.bar(x: Swift.Int) -> Swift.String", "Foo.bar(x:)"},
		{"$s4main1AC1xSivg", "main.A.x.getter : Swift.Int", "A.x.getter"},
		{"$s4main3fooyyFyycfU_", "closure #1 () -> () in main.foo() -> ()", "closure #1 in foo()"},
	} {
		if got, ok := Demangle(c.in); !ok || got != c.full {
			t.Errorf("Demangle(%s) = %q, want %q", c.in, got, c.full)
		}
		if got, ok := Simplified(c.in); !ok || got != c.simplified {
			t.Errorf("Simplified(%s) = %q, want %q", c.in, got, c.simplified)
		}
	}
	for _, s := range []string{"main", "_main", "$", "$s", "_T", "$sZZZZ", ""} {
		if got, ok := Demangle(s); ok {
			t.Errorf("Demangle(%q) = %q, want not demangled", s, got)
		}
	}
}

// benchNames are names of the kinds real profiles hold: a function, a
// method, a closure, a generic specialization, a protocol witness, an
// accessor, a merged function and an async function.
var benchNames = []string{
	"$s4main5greetyySiF",
	"$s4main3FooV3bar1xSSSi_tF",
	"$s4main3fooyyFyycfU_",
	"$sSa6appendyyxnFSi_Tg5",
	"$s4main3FooCAA1PA2aDP1fyyFTW",
	"$s4main1AC1xSivg",
	"$s4main1fyyFTm",
	"$s4main1fyyYaF",
}

func BenchmarkDemangle(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range benchNames {
			Demangle(s)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(benchNames)), "ns/name")
}

func BenchmarkSimplified(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range benchNames {
			Simplified(s)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(benchNames)), "ns/name")
}
