package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/macprof/macprof/diff"
)

// target is the function the slow build makes slower.
const target = "example.com/work.score"

// run is one benchmark run of the pool: its profile and its ns/op.
type run struct {
	prof  *diff.Profile
	nsOp  float64
	iters map[string]int64 // its benchmarks' iteration counts
}

// loadPool reads side's runs from pool in the order they were recorded.
func loadPool(pool, side string) ([]run, error) {
	paths, err := filepath.Glob(filepath.Join(pool, side+"-*.pprof"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var runs []run
	for _, p := range paths {
		prof, err := diff.Load(p)
		if err != nil {
			return nil, err
		}
		txt := strings.TrimSuffix(p, ".pprof") + ".txt"
		ns, err := nsPerOp(txt)
		if err != nil {
			return nil, err
		}
		out, err := os.ReadFile(txt)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run{prof, ns, diff.BenchIterations(out)})
	}
	return runs, nil
}

// nsPerOp reads the ns/op of a `go test -bench` output's benchmark line.
func nsPerOp(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		for i := 1; i < len(fs); i++ {
			if fs[i] == "ns/op" && strings.HasPrefix(fs[0], "Benchmark") {
				return strconv.ParseFloat(fs[i-1], 64)
			}
		}
	}
	return 0, fmt.Errorf("%s: no ns/op line", path)
}

// method is one way of running the comparison.
type method struct {
	name string
	cfg  diff.Config
	// auto finds a fixed amount of work from the runs' `go test -bench`
	// outputs, as macprof diff does from the files beside the profiles.
	auto bool
}

// compare runs the method on two sets of runs.
func (m method) compare(a, b []run) (*diff.Report, error) {
	cfg := m.cfg
	if m.auto {
		cfg.FixedWork = diff.FixedWork(iters(a), iters(b))
	}
	return diff.Compare(profs(a), profs(b), cfg)
}

func iters(rs []run) []map[string]int64 {
	out := make([]map[string]int64, len(rs))
	for i, r := range rs {
		out[i] = r.iters
	}
	return out
}

func profs(rs []run) []*diff.Profile {
	out := make([]*diff.Profile, len(rs))
	for i, r := range rs {
		out[i] = r.prof
	}
	return out
}

func ns(rs []run) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.nsOp
	}
	return out
}

// report compares disjoint sets of the pool at each size and writes the
// figures (same-build pairs interleaved, as a CI job records base and head
// in turn, or in consecutive blocks when blocked): false alarms among same-build pairs (base against base and slow
// against slow), and for base against slow how often the target was found,
// its median minimum detectable change and benchstat's verdict on ns/op.
func report(w io.Writer, base, slow []run, sizes []int, methods []method, blocked, slide bool) error {
	var samples []int64
	for _, r := range append(append([]run(nil), base...), slow...) {
		samples = append(samples, r.prof.Samples)
	}
	slices.Sort(samples)
	fmt.Fprintf(w, "pool: %d base and %d slow runs; samples per profile: median %d, range %d-%d\n",
		len(base), len(slow), samples[len(samples)/2], samples[0], samples[len(samples)-1])
	shareB, shareS := targetShare(base), targetShare(slow)
	fmt.Fprintf(w, "%s's flat share of the judged samples, pooled: base %.2f%%, slow %.2f%% (%+.2fpp)\n\n", target, shareB, shareS, shareS-shareB)
	for _, m := range methods {
		fmt.Fprintf(w, "method: %s\n", m.name)
		fmt.Fprintf(w, "%-7s %-28s %-22s %-13s %-24s\n", "a side", "false alarms (same build)", "score found (30% slower)", "score mde", "benchstat ns/op (p<0.05)")
		for _, k := range sizes {
			alarms, pairs := 0, 0
			names := map[string]int{}
			for _, rs := range [][]run{base, slow} {
				for i := 0; i+2*k <= len(rs); i += step(2*k, slide) {
					a, b := split(rs[i:i+2*k], blocked)
					r, err := m.compare(a, b)
					if err != nil {
						return err
					}
					pairs++
					if len(r.Regressions) > 0 {
						alarms++
						for _, n := range r.Regressions {
							names[n]++
						}
						f := r.Functions[0]
						fmt.Fprintf(w, "        alarm: %s vs %s: %s flat %+.2fpp (noise %.2f), cum %+.2fpp (noise %.2f), dispersion %.2f (%d df)\n",
							r.Base.Profiles, r.New.Profiles, f.Name, f.Flat.Delta, f.Flat.Noise, f.Cum.Delta, f.Cum.Noise, r.Dispersion, r.DispersionDF)
					}
				}
			}
			found, sets, bsFound := 0, 0, 0
			var mdes, tmdes []float64
			for i := 0; i+k <= len(base) && i+k <= len(slow); i += step(k, slide) {
				r, err := m.compare(base[i:i+k], slow[i:i+k])
				if err != nil {
					return err
				}
				sets++
				tallyTarget(r, target, &found, &mdes, &tmdes)
				if p := mannWhitneyP(ns(base[i:i+k]), ns(slow[i:i+k])); p < 0.05 && median(ns(slow[i:i+k])) > median(ns(base[i:i+k])) {
					bsFound++
				}
			}
			fmt.Fprintf(w, "%-7d %-28s %-22s %-13s %-24s\n", k,
				fmt.Sprintf("%d/%d (%.1f%%)", alarms, pairs, pct(alarms, pairs)),
				fmt.Sprintf("%d/%d (%.0f%%)", found, sets, pct(found, sets)),
				mdeText(mdes, tmdes),
				fmt.Sprintf("%d/%d (%.0f%%)", bsFound, sets, pct(bsFound, sets)))
			if len(names) > 0 {
				fmt.Fprintf(w, "        alarms named: %v\n", names)
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}

// step is how far the next set starts: past this one, or one run on when
// the sets slide (overlapping, so that a pool of N runs gives about N sets
// of any size, each of runs recorded close in time).
func step(size int, slide bool) int {
	if slide {
		return 1
	}
	return size
}

// split divides 2k consecutive runs into two sides: alternate runs, so
// that both sides see the same drift of the machine's load, or the first
// k against the last k when blocked.
func split(rs []run, blocked bool) (a, b []run) {
	k := len(rs) / 2
	if blocked {
		return rs[:k], rs[k:]
	}
	for i, r := range rs {
		if i%2 == 0 {
			a = append(a, r)
		} else {
			b = append(b, r)
		}
	}
	return a, b
}

// targetShare pools the target's flat share over runs, with the default
// load-following functions left out as the comparison leaves them.
func targetShare(rs []run) float64 {
	r, err := diff.Compare(profs(rs), profs(rs), diff.Config{Top: -1})
	if err != nil {
		return 0
	}
	for _, f := range r.Functions {
		if f.Name == target {
			return f.Flat.Base
		}
	}
	return 0
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// mdeText is score's median minimum detectable change: of its share, and
// of its own time when that was judged.
func mdeText(share, time []float64) string {
	if len(time) > 0 {
		return fmt.Sprintf("%.1fpp, %.0f%% time", median(share), median(time))
	}
	return fmt.Sprintf("%.2fpp", median(share))
}

// tallyTarget adds what r says of target to a method's tally: one more find
// where it is a regression, and its minimum detectable changes (share, and
// time where judged).
func tallyTarget(r *diff.Report, target string, found *int, mdes, tmdes *[]float64) {
	if slices.Contains(r.Regressions, target) {
		*found++
	}
	for _, f := range r.Functions {
		if f.Name == target {
			*mdes = append(*mdes, f.Flat.MDE)
			if f.Time != nil {
				*tmdes = append(*tmdes, f.Time.MDE)
			}
		}
	}
}
