package symcache

import (
	"runtime"
	"strings"
	"testing"
)

func TestTrimGoABI(t *testing.T) {
	for in, want := range map[string]string{
		"runtime.goexit.abi0":             "runtime.goexit",
		"runtime.memmove.abiinternal":     "runtime.memmove",
		"main.worker":                     "main.worker",
		"abi0":                            "abi0",
		".abi0":                           ".abi0",
		"x.abi01":                         "x.abi01",
		"runtime.(*T).m.abi0":             "runtime.(*T).m",
		"internal/bytealg.IndexByte.abi0": "internal/bytealg.IndexByte",
	} {
		if got := TrimGoABI(in); got != want {
			t.Errorf("TrimGoABI(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGoABISuffixDropped builds an unstripped Go program, whose .symtab
// names assembly functions with .abi0 (go tool nm shows them), and checks
// that no frame keeps the suffix and runtime.goexit is named as in
// `go test -cpuprofile` profiles.
func TestGoABISuffixDropped(t *testing.T) {
	bin := buildGo(t, t.TempDir(), "prog", runtime.GOOS, runtime.GOARCH)
	nm := goNM(t, bin)
	img := execImage(t, bin, 0)
	c := New(Options{})
	abi0 := 0
	for _, s := range nm {
		if !strings.HasSuffix(s.name, ".abi0") {
			continue
		}
		abi0++
		fr := c.Symbolize(img, s.addr, false)
		want := strings.TrimSuffix(s.name, ".abi0")
		if got := fr[len(fr)-1].Function; got != want {
			t.Errorf("%#x (%s): got %q, want %q", s.addr, s.name, got, want)
		}
	}
	if abi0 < 10 {
		t.Fatalf("go tool nm listed only %d .abi0 functions", abi0)
	}
}
