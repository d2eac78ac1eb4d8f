package diff

import (
	"bytes"
	"compress/gzip"
	"math"
	"testing"
)

// FuzzParse feeds anything to the profile reader, as a CI job may: it must
// return a profile with samples or an error, never panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte("main;work;sort 8\nmain;work;hash 2\n"))
	f.Add(synthetic(f, "cpu", map[string]int64{"a": 3, "b": 1}))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		var n int64
		for _, s := range p.Stacks {
			if len(s.Frames) == 0 || s.Count <= 0 {
				t.Fatalf("stack %+v", s)
			}
			n += s.Count
		}
		if n != p.Samples || n <= 0 {
			t.Fatalf("samples %d, stacks add up to %d", p.Samples, n)
		}
		// Comparing a parsed profile with itself must not fail either,
		// one a side or two (which measures the dispersion).
		if _, err := Compare([]*Profile{p}, []*Profile{p}, Config{}); err != nil {
			t.Fatal(err)
		}
		r, err := Compare([]*Profile{p, p}, []*Profile{p, p}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(r.Dispersion) || r.Dispersion < 1 || len(r.Regressions) != 0 {
			t.Fatalf("two copies a side: dispersion %v, regressions %v", r.Dispersion, r.Regressions)
		}
	})
}

func TestParseGzipText(t *testing.T) {
	// A gzipped folded file is not text: it is read as pprof and refused
	// with pprof's error rather than misread.
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte("main;a 1\n"))
	w.Close()
	if _, err := Parse(b.Bytes()); err == nil {
		t.Error("gzipped folded stacks parsed")
	}
}
