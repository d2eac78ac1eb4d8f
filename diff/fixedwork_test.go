package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBenchIterations: the iteration counts of `go test -bench` lines, by
// benchmark; equal counts in every run of both sides are a fixed amount of
// work, and anything else (counts chosen by timing, a side without output,
// no benchmark line) is not.
func TestBenchIterations(t *testing.T) {
	out := "goos: linux\nBenchmarkWork-2   \t   20000\t    944516 ns/op\nBenchmarkSmall-2 \t 8000 \t 12 ns/op\t 0 B/op\nPASS\n"
	m := BenchIterations([]byte(out))
	if len(m) != 2 || m["BenchmarkWork-2"] != 20000 || m["BenchmarkSmall-2"] != 8000 {
		t.Fatalf("BenchIterations: %v, want Work 20000 and Small 8000", m)
	}
	if m := BenchIterations([]byte("PASS\nok  example.com/work 1.2s\nBenchmarkX-2 FAIL\n")); m != nil {
		t.Errorf("no benchmark line: %v, want nil", m)
	}
	other := map[string]int64{"BenchmarkWork-2": 20311, "BenchmarkSmall-2": 8000}
	for _, c := range []struct {
		name      string
		base, new []map[string]int64
		want      bool
	}{
		{"same counts", []map[string]int64{m, m}, []map[string]int64{m}, true},
		{"one run's count differs", []map[string]int64{m, other}, []map[string]int64{m}, false},
		{"new's count differs", []map[string]int64{m}, []map[string]int64{other}, false},
		{"no output on a side", []map[string]int64{m}, nil, false},
		{"an output without benchmarks", []map[string]int64{m}, []map[string]int64{m, nil}, false},
	} {
		if got := FixedWork(c.base, c.new); got != c.want {
			t.Errorf("%s: FixedWork %v, want %v", c.name, got, c.want)
		}
	}
}

// TestFixedWorkDefault: with a fixed amount of work, the default
// thresholds add a function's own time, which finds score 30% slower in
// at least 18 of 20 sets of five profiles a side where shares alone (the
// default otherwise) find fewer; profiles without a sampling period keep
// the shares alone.
func TestFixedWorkDefault(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 30))
	means := map[string]float64{"score": 575, "parse": 150, "sortKeys": 80, "checksum": 80}
	slow := slowed(means, "score", 1.3)
	sideOf := func(m map[string]float64) []*Profile {
		ps := make([]*Profile, 5)
		for i := range ps {
			ps[i] = fixedWork(rng, m)
			ps[i].Path = fmt.Sprintf("p%d", i)
		}
		return ps
	}
	fixed, shares := 0, 0
	for range 20 {
		b, n := sideOf(means), sideOf(slow)
		r, err := Compare(b, n, Config{FixedWork: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(r.FailOn, "time:+10%") || !r.FixedWork {
			t.Fatalf("fixed work: fail on %v (fixed work %v), want time:+10%% added", r.FailOn, r.FixedWork)
		}
		if slices.Contains(r.Regressions, "score") {
			fixed++
		}
		if s, _ := Compare(b, n, Config{}); slices.Contains(s.Regressions, "score") {
			shares++
		}
	}
	t.Logf("score 30%% slower, five a side: found in %d of 20 sets with fixed work, %d by shares alone", fixed, shares)
	if fixed < 18 || shares >= fixed {
		t.Errorf("score 30%% slower: found in %d of 20 sets with fixed work (want 18 or more), by shares alone in %d (want fewer)", fixed, shares)
	}
	p := fixedWork(rng, means)
	p.Period = 0
	r, err := Compare([]*Profile{p}, []*Profile{p}, Config{FixedWork: true})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(r.FailOn, "time:+10%") {
		t.Errorf("profiles without a period: fail on %v, want the shares alone", r.FailOn)
	}
}

// TestMainFindsFixedWork: `macprof diff DIR DIR` where each directory holds
// `go test -bench` output of the same iteration counts judges time too and
// says so; output of other counts keeps the default.
func TestMainFindsFixedWork(t *testing.T) {
	for _, c := range []struct {
		newIters string
		want     bool
	}{{"20000", true}, {"19377", false}} {
		var dirs [2]string
		for i, iters := range []string{"20000", c.newIters} {
			dirs[i] = t.TempDir()
			if err := os.WriteFile(filepath.Join(dirs[i], "cpu.pprof"), synthetic(t, "cpu", map[string]int64{"a": 600, "b": 400}), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dirs[i], "bench.txt"), []byte("BenchmarkWork-2   \t   "+iters+"\t   944516 ns/op\nPASS\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var out, errb bytes.Buffer
		st := Main(Args{Positional: dirs[:], Format: "json", Alpha: DefaultAlpha}, &out, &errb)
		var r Report
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("exit %d, %v: %s", st, err, errb.String())
		}
		if st != 0 || r.FixedWork != c.want || slices.Contains(r.FailOn, "time:+10%") != c.want {
			t.Errorf("base 20000 iterations, new %s: exit %d, fixed work %v, fail on %v; want exit 0 and fixed work %v", c.newIters, st, r.FixedWork, r.FailOn, c.want)
		}
	}
}

// TestOwnSpreadWidens: a share that moves between its profiles far more
// than the run spread of all functions gets the wider bound its own spread
// gives; one that moves by sampling alone keeps the common one.
func TestOwnSpreadWidens(t *testing.T) {
	totals := []int64{1000, 1000, 1000}
	common := shareTest{baseTotal: totals, newTotal: totals, dispersion: 1, runVar: 0.12 * 0.12, runDF: 8}
	steady, moving := common, common
	steady.baseCount, steady.newCount = []int64{300, 300, 300}, []int64{300, 300, 300}
	moving.baseCount, moving.newCount = []int64{200, 400, 300}, []int64{400, 200, 300}
	s, m := steady.run(), moving.run()
	if s.base != m.base || s.new != m.new {
		t.Fatalf("the two tests' shares differ: %v %v", s, m)
	}
	// Shares of 20% to 40% are log-odds 0.56 apart around 30%: a spread
	// near 0.45 a run, far above 0.12.
	if m.seRun < 2*s.seRun {
		t.Errorf("own spread 0.2-0.4 a run: run error %.4f, want well above the common %.4f", m.seRun, s.seRun)
	}
	if want := 0.12 * 0.21 * math.Sqrt(2.0/3); math.Abs(s.seRun-want) > 0.01*want {
		t.Errorf("sampling alone: run error %.5f, want the common spread's %.5f", s.seRun, want)
	}
}

// TestReportShowsTheJudgedTime: a report that judged own time shows each
// function's time change and its noise in the text and markdown tables,
// so that a regression by time is not printed beside a flat share alone;
// a go test output in a side's directory is listed as such.
func TestReportShowsTheJudgedTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	means := map[string]float64{"score": 575, "parse": 150, "sortKeys": 80, "checksum": 80}
	var b, n []*Profile
	for i := range 5 {
		b = append(b, fixedWork(rng, means))
		n = append(n, fixedWork(rng, slowed(means, "score", 1.3)))
		b[i].Path, n[i].Path = fmt.Sprintf("b%d", i), fmt.Sprintf("n%d", i)
	}
	r, err := Compare(b, n, Config{FixedWork: true})
	if err != nil {
		t.Fatal(err)
	}
	var score *Function
	for i := range r.Functions {
		if r.Functions[i].Name == "score" {
			score = &r.Functions[i]
		}
	}
	if score == nil || score.Time == nil {
		t.Fatalf("no own-time change for score: %+v", score)
	}
	want := signed(score.Time.Delta, "%") + " ±" + num(score.Time.Noise) + "%"
	for _, format := range []string{"text", "markdown"} {
		var out bytes.Buffer
		if err := r.Write(&out, Format(format)); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if !strings.Contains(s, "time Δ") || !strings.Contains(strings.Join(strings.Fields(s), " "), want) {
			t.Errorf("%s report without score's own time change %q:\n%s", format, want, s)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cpu.pprof"), synthetic(t, "cpu", map[string]int64{"a": 600}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.txt"), []byte("BenchmarkWork-2   \t   20000\t   944516 ns/op\nPASS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, skipped, err := Expand([]string{dir}); err != nil || len(skipped) != 1 || !strings.HasSuffix(skipped[0], "(go test -bench output)") {
		t.Errorf("Expand skipped %q, %v; want bench.txt as go test -bench output", skipped, err)
	}
}
