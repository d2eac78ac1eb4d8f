package exporter

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/exporter/folded"
	"github.com/macprof/macprof/internal/fixture"
)

// BenchmarkProfile10k builds the pprof profile of a window of 10,000 unique
// stacks, with the frame cache warm (as for every window after the first).
func BenchmarkProfile10k(b *testing.B) {
	w, c := fixture.BenchWindow(10000), fixture.BenchCache()
	if _, err := Profile(w, c, Options{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Profile(w, c, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProfile10kCold is the same with a new symbol cache each time:
// every call site is symbolized.
func BenchmarkProfile10kCold(b *testing.B) {
	w := fixture.BenchWindow(10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Profile(w, fixture.BenchCache(), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrite10k encodes the window in each format, frame cache warm.
func BenchmarkWrite10k(b *testing.B) {
	w, c := fixture.BenchWindow(10000), fixture.BenchCache()
	for _, f := range Formats {
		b.Run(f.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Write(io.Discard, f, w, c, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLargeWindow checks that a window of thousands of stacks gives the
// same total in every format, and a pprof profile that survives a round
// trip.
func TestLargeWindow(t *testing.T) {
	w, c := fixture.BenchWindow(3000), fixture.BenchCache()
	var total int64
	for _, s := range w.Samples {
		total += s.Count
	}
	p, err := Profile(w, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	q, err := pprof.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var ptotal int64
	for _, s := range q.Sample {
		ptotal += s.Value[0]
		if len(s.Location) < 8 {
			t.Fatalf("sample with %d locations", len(s.Location))
		}
	}
	if ptotal != total || len(q.Sample) != 3000 || len(q.Mapping) != 1 || !q.Mapping[0].HasFunctions {
		t.Errorf("pprof: total %d of %d, %d samples, %d mappings", ptotal, total, len(q.Sample), len(q.Mapping))
	}
	buf.Reset()
	if err := Write(&buf, FormatFolded, w, c, Options{}); err != nil {
		t.Fatal(err)
	}
	stacks, err := folded.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var ftotal int64
	for _, s := range stacks {
		ftotal += s.Count
	}
	if ftotal != total {
		t.Errorf("folded total %d, want %d", ftotal, total)
	}
	buf.Reset()
	if err := Write(&buf, FormatSVG, w, c, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), fmt.Sprintf("all (%s samples, 100.00%%)", groupDigits(total))) {
		t.Errorf("SVG root does not hold %d samples", total)
	}
	if err := xmlWellFormed(buf.Bytes()); err != nil {
		t.Error(err)
	}
}

func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
