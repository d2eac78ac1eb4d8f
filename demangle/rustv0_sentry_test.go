package demangle

import (
	"math/rand"
	"os"
	"strings"
	"testing"
)

// sentryV0Names are 512 of the v0 Rust names that sentry-cli's bench
// addresses meet (llvm-nm --arch arm64; its own crates' names are legacy).
func sentryV0Names(tb testing.TB) []string {
	b, err := os.ReadFile("testdata/sentry-cli-rust-v0.txt")
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Fields(string(b))
}

// BenchmarkRustV0Names demangles sentry-cli's v0 names as symbolize does
// (Name, Simplified); ns/op and allocs/op are per name.
func BenchmarkRustV0Names(b *testing.B) {
	names := sentryV0Names(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Name(names[i%len(names)], Simplified)
	}
}

// rustV0Before is rustV0 as it was before the printing pass came first: a
// validating pass over the whole name, then the printing pass.
func rustV0Before(s string, full bool) (string, bool) {
	inner, ok := v0Inner(s)
	if !ok {
		return "", false
	}
	p := &v0Printer{sym: inner, skip: true}
	p.path(false)
	if p.err == "" && p.pos < len(inner) && inner[p.pos] >= 'A' && inner[p.pos] <= 'Z' {
		p.path(false)
	}
	if p.err != "" {
		return "", false
	}
	suffix := inner[p.pos:]
	if suffix != "" && (suffix[0] != '.' || !symbolLike(suffix)) {
		return "", false
	}
	p = &v0Printer{sym: inner, full: full}
	p.run()
	return string(append(p.out, suffix...)), true
}

// v0AsBeforeNames are names whose two passes disagree or stop early: the
// printing pass fails where the validating one does not (a lifetime not
// bound), reaches the size or depth limit, fails inside a backref; the
// validating pass fails after a good path (a bad instantiating crate or
// suffix), or in it.
var v0AsBeforeNames = []string{
	"_RIC0L0_E", "_RIC0L1_E", "_RIC0L_E", "_RIC0FG_L0_EuE", "_RIC0FG0_L1_EuE", "_RIC0FG0_L2_EuE",
	"_RMC0FGZZZ_Eu", "RYFG_FGyyEvRYFF_EvRYFFEvERLB_B_B_ERLRjB_B_B_", "_RNvB_1a", "_RMC0RB2_",
	"_RMC0" + strings.Repeat("T", 600) + "p" + strings.Repeat("E", 600),
	"_RNvC3foo3barC3baz", "_RNvC3foo3barCx", "_RNvC3foo3bar.x y", "_RNvC3foo3bar.llvm.AB", "_RNvC3foo3barZ",
	"_RNvC3foo3bar_", "_RNvC3foo", "_RNvB9_3bar", "_RNvNtC3foo3bar3bazB4_", "_RINvC3foo3barB5_E",
	"_RC3foo.x", "_RC3foo.", "_RC3foo.\x7f", "_RYpNtC3foo3Bar3baz", "_RNvC3fooz",
}

// TestRustV0AsBefore checks rustV0 against the reading it replaced
// (rustV0Before) in both forms: rustc-demangle's cases, 512 of
// sentry-cli's names, names where the passes disagree or stop early,
// and every prefix of the sentry-cli names and a byte changed in them.
func TestRustV0AsBefore(t *testing.T) {
	names := append(sentryV0Names(t), v0AsBeforeNames...)
	for _, c := range rustCases {
		names = append(names, c.in)
	}
	rng := rand.New(rand.NewSource(1))
	for _, s := range sentryV0Names(t)[:64] {
		for i := range len(s) {
			names = append(names, s[:i], s[:i]+string("_0aZB."[rng.Intn(6)])+s[i+1:])
		}
	}
	for _, s := range names {
		checkV0AsBefore(t, s)
	}
}

// checkV0AsBefore fails when rustV0 and rustV0Before read s differently in
// either form.
func checkV0AsBefore(t *testing.T, s string) {
	t.Helper()
	for _, full := range []bool{false, true} {
		got, ok := rustV0(s, full)
		want, wantOK := rustV0Before(s, full)
		if got != want || ok != wantOK {
			t.Fatalf("rustV0(%q, %v) = %.200q, %v; before %.200q, %v", s, full, got, ok, want, wantOK)
		}
	}
}

// FuzzRustV0AsBefore checks rustV0 against rustV0Before on fuzzed names.
func FuzzRustV0AsBefore(f *testing.F) {
	for _, s := range v0AsBeforeNames {
		f.Add(s)
	}
	for _, c := range rustCases {
		if strings.HasPrefix(c.in, "_R") {
			f.Add(c.in)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkV0AsBefore(t, s)
	})
}

// base62Before is v0Printer.base62 as it was, by peek and eat.
func base62Before(p *v0Printer) (uint64, bool) {
	if !p.ok() {
		return 0, false
	}
	if p.eat('_') {
		return 0, true
	}
	var x uint64
	for !p.eat('_') {
		var d uint64
		c := p.peek()
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'z':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'Z':
			d = uint64(c-'A') + 36
		default:
			p.fail(v0Invalid)
			return 0, false
		}
		p.pos++
		if x > (1<<64-1-d)/62 {
			p.fail(v0Invalid)
			return 0, false
		}
		x = x*62 + d
	}
	if x == 1<<64-1 {
		p.fail(v0Invalid)
		return 0, false
	}
	return x + 1, true
}

// TestBase62AsBefore checks base62's value, position, error and output
// against base62Before's: numbers of every length up to past 64 bits (and
// 2^64-1 exactly, "LygHa16AHYE_"), with bad bytes, without their "_", and
// after an error.
func TestBase62AsBefore(t *testing.T) {
	ins := []string{"", "_", "0_", "Z_", "10_", "zz", "z!_", "LygHa16AHYE_", "LygHa16AHYF_", "LygHa16AHYD_",
		"zzzzzzzzzzz_", "zzzzzzzzzzzz_", "\x80_"}
	rng := rand.New(rand.NewSource(1))
	const digits = "0123456789abcxyzABCXYZ_-!"
	for range 5000 {
		b := make([]byte, rng.Intn(15))
		for i := range b {
			b[i] = digits[rng.Intn(len(digits))]
		}
		ins = append(ins, string(b))
	}
	for _, in := range ins {
		for _, failed := range []bool{false, true} {
			p, q := &v0Printer{sym: "x" + in, pos: 1}, &v0Printer{sym: "x" + in, pos: 1}
			if failed {
				p.fail(v0Invalid)
				q.fail(v0Invalid)
			}
			x, ok := p.base62()
			y, wantOK := base62Before(q)
			if x != y || ok != wantOK || p.pos != q.pos || p.err != q.err || string(p.out) != string(q.out) {
				t.Fatalf("base62(%q): %d %v pos %d err %q out %q; before %d %v pos %d err %q out %q",
					in, x, ok, p.pos, p.err, p.out, y, wantOK, q.pos, q.err, q.out)
			}
		}
	}
}
