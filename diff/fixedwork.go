package diff

import (
	"bufio"
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/macprof/macprof/internal/safefile"
)

// FixedWorkFailOn is the default --fail-on for profiles of a fixed amount
// of work: a function's own time joins the shares, as it finds far smaller
// changes (bench/diffstat: a 30% slowdown at half the time found in every
// set of five runs a side, where its share found 63%).
const FixedWorkFailOn = DefaultFailOn + ",time:+10%"

// maxBenchOutput bounds a `go test -bench` output read for its iteration
// counts; real ones are a few kilobytes.
const maxBenchOutput = 4 << 20

// BenchIterations reads the iteration count of each benchmark line
// ("BenchmarkX-2   20000   944516 ns/op") of a `go test -bench` output, by
// benchmark name; nil when data has none.
func BenchIterations(data []byte) map[string]int64 {
	var out map[string]int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 || !strings.HasPrefix(fs[0], "Benchmark") || fs[3] != "ns/op" {
			continue
		}
		n, err := strconv.ParseInt(fs[1], 10, 64)
		if err != nil || n <= 0 {
			continue
		}
		if out == nil {
			out = make(map[string]int64)
		}
		out[fs[0]] = n
	}
	return out
}

// FixedWork reports whether the `go test -bench` outputs of both sides
// (each a map from BenchIterations) show the same benchmarks run the same
// number of times in every run: -benchtime Nx, a fixed amount of work,
// where a function's own time per profile compares. Benchmarks run for a
// duration choose their counts from their timing, which differ between
// runs. It needs an output on each side.
func FixedWork(base, nw []map[string]int64) bool {
	if len(base) == 0 || len(nw) == 0 {
		return false
	}
	first := base[0]
	if len(first) == 0 {
		return false
	}
	for _, m := range append(append([]map[string]int64(nil), base...), nw...) {
		if !maps.Equal(m, first) {
			return false
		}
	}
	return true
}

// benchOutputs reads the iteration counts of the `go test -bench` outputs
// among a side's arguments: the regular files of each directory given that
// hold benchmark lines (Expand skips them as not profiles).
func benchOutputs(args []string) []map[string]int64 {
	var out []map[string]int64
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") || namedProfile(e.Name()) {
				continue
			}
			data, err := safefile.ReadFile(filepath.Join(a, e.Name()), maxBenchOutput, false)
			if err != nil {
				continue
			}
			if m := BenchIterations(data); m != nil {
				out = append(out, m)
			}
		}
	}
	return out
}
