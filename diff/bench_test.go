package diff

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	pprof "github.com/google/pprof/profile"
)

// stacks10k writes a gzipped pprof profile of 10,000 distinct stacks of
// 8 to 40 frames over 4,096 functions, a sample count of 1 to 20 each.
func stacks10k(b *testing.B, path string, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 1))
	p := &pprof.Profile{
		SampleType: []*pprof.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &pprof.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10101010,
	}
	for i := range 4096 {
		fn := &pprof.Function{ID: uint64(i + 1), Name: fmt.Sprintf("github.com/example/pkg%d.Func%d", i%64, i), Filename: fmt.Sprintf("/src/pkg%d/file%d.go", i%64, i%7)}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, &pprof.Location{ID: uint64(i + 1), Address: uint64(0x1000 + i*16), Line: []pprof.Line{{Function: fn, Line: int64(i)}}})
	}
	for range 10000 {
		locs := make([]*pprof.Location, 8+r.IntN(33))
		for j := range locs {
			locs[j] = p.Location[r.IntN(len(p.Location))]
		}
		n := int64(1 + r.IntN(20))
		p.Sample = append(p.Sample, &pprof.Sample{Location: locs, Value: []int64{n, n * p.Period}})
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		b.Fatal(err)
	}
	f.Close()
}

// BenchmarkDiff10k is `macprof diff` of two 10,000-stack profiles: load
// both, compare, write the text report.
func BenchmarkDiff10k(b *testing.B) {
	dir := b.TempDir()
	base, nw := filepath.Join(dir, "base.pb.gz"), filepath.Join(dir, "new.pb.gz")
	stacks10k(b, base, 1)
	stacks10k(b, nw, 2)
	b.ResetTimer()
	for b.Loop() {
		r, err := Run(Config{Base: []string{base}, New: []string{nw}})
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Write(io.Discard, Text); err != nil {
			b.Fatal(err)
		}
	}
}
