package exporter

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/exporter/folded"
	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/symcache"
)

// benchLib is a synthetic 16 MiB image with benchFuncs functions of 4 KiB.
var benchLib = &images.Image{
	Path:    "/bench/libbig.so",
	BuildID: "bench",
	Format:  images.FormatELF,
	Start:   0x10000000,
	Limit:   0x11000000,
}

const benchFuncs = 4096

func benchCache() *symcache.Cache {
	return symcache.New(symcache.Options{Loaders: map[images.Format]symcache.Loader{
		images.FormatELF: func(img *images.Image) (*symcache.Table, error) {
			syms := make([]symcache.Symbol, benchFuncs)
			for i := range syms {
				syms[i] = symcache.Symbol{Name: fmt.Sprintf("github.com/example/app/pkg%d.(*Type%d).Method%d", i%37, i%101, i), Start: uint64(i) << 12, Size: 1 << 12}
			}
			return symcache.NewTable("libbig.so", syms, nil, nil), nil
		},
	}})
}

// benchWindow has n unique stacks of 8 to 40 frames over 8 threads, drawn
// from 20,000 distinct call sites, one sample per stack.
func benchWindow(n int) *profile.Window {
	rng := rand.New(rand.NewPCG(7, 11))
	sites := make([]uint64, 20000)
	for i := range sites {
		sites[i] = benchLib.Start + uint64(rng.IntN(benchFuncs))<<12 + uint64(1+rng.IntN(4000))
	}
	w := &profile.Window{
		Start:     time.Unix(1_700_000_000, 0),
		End:       time.Unix(1_700_000_010, 0),
		Period:    time.Second / 99,
		Processes: []profile.Process{{PID: 42, Executable: benchLib.Path, Images: images.NewSet([]*images.Image{benchLib})}},
	}
	for i := 0; i < n; i++ {
		pcs := make([]uint64, 8+rng.IntN(33))
		for j := range pcs {
			// Shared outer frames, varied inner frames, like real trees.
			if j >= len(pcs)-4 {
				pcs[j] = sites[j]
			} else {
				pcs[j] = sites[rng.IntN(len(sites))]
			}
		}
		w.Stacks = append(w.Stacks, profile.Stack{PCs: pcs})
		w.Samples = append(w.Samples, profile.Sample{Stack: i, PID: 42, Thread: target.ThreadID(100 + i%8), ThreadName: fmt.Sprintf("worker-%d", i%8), Count: int64(1 + rng.IntN(20))})
	}
	return w
}

// BenchmarkProfile10k builds the pprof profile of a window of 10,000 unique
// stacks, with the frame cache warm (as for every window after the first).
func BenchmarkProfile10k(b *testing.B) {
	w, c := benchWindow(10000), benchCache()
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
	w := benchWindow(10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Profile(w, benchCache(), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrite10k encodes the window in each format, frame cache warm.
func BenchmarkWrite10k(b *testing.B) {
	w, c := benchWindow(10000), benchCache()
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
	w, c := benchWindow(3000), benchCache()
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
