// Command diffstat measures how often `macprof diff` alarms on identical
// code and how often it finds a real slowdown, as a CI user would meet
// them: a Go benchmark package (testdata/work) built twice, as it is and
// with score (about half the CPU time) 30% slower, each run a fresh
// `go test -bench . -cpuprofile` of a fixed count of iterations. It keeps
// the profiles in a pool directory, so that runs add up, and compares
// sets of them:
//
//	go run ./bench/diffstat -pool /tmp/diffstat -add 100   # record 100 of each build, then report
//	go run ./bench/diffstat -pool /tmp/diffstat            # report on the pool as it is
//	go run ./bench/diffstat -pool /tmp/diffstat -judge-all # also the methods before
//	go run ./bench/diffstat -pool DIR -resample 1000 -local # 1,000 random sets of consecutive runs a size
//	go run ./bench/diffstat -pool DIR -spread               # each function's run-to-run spread
//
// Run it from the repository root. The report gives, at 1, 3 and 5
// profiles a side, the false alarms among pairs of identical builds, the
// share of slow-against-base sets in which score was found, score's
// minimum detectable change, and, on the same runs' ns/op, what benchstat's
// test (Mann-Whitney U at 0.05) found; with macprof diff's defaults (which
// add a function's own time, as the runs' go test outputs show a fixed
// count of iterations) and with shares alone. Same-build pairs take
// alternate runs a side, as a CI job interleaves base and head; -blocked
// compares consecutive blocks instead, which the machine's load drifting
// between them can fail. Disjoint sets are few; -resample draws random
// ones, which share runs (the report says how many distinct runs its
// alarms involve).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/macprof/macprof/diff"
)

func main() {
	pool := flag.String("pool", "/tmp/diffstat", "`DIR` of profiles, added to by -add")
	add := flag.Int("add", 0, "record `N` more profiles of each build before the report")
	jobs := flag.Int("jobs", 2, "benchmarks run at a time")
	benchtime := flag.String("benchtime", "3000x", "each run's -test.benchtime: a count of iterations fixes the CPU time, whatever the load")
	blocked := flag.Bool("blocked", false, "compare same-build runs in consecutive blocks, not alternated (shows the drift of the machine's load)")
	slide := flag.Bool("slide", false, "compare overlapping sets, each starting one run after the last, not disjoint ones (sets share runs)")
	judgeAll := flag.Bool("judge-all", false, "also report with no function set apart as load-following, and with sampling alone assumed")
	resample := flag.Int("resample", 0, "also compare `N` random sets of the pool at each size (sets share runs)")
	local := flag.Bool("local", false, "with -resample: each set of consecutive runs, as a CI job records base and head in turn")
	seed := flag.Uint64("seed", 1, "the random sets' seed")
	dispersion := flag.Float64("dispersion", 0, "the default method's --dispersion (0: macprof diff's default)")
	runSpread := flag.Float64("run-spread", 0, "the default method's --run-spread (0: macprof diff's default, negative: none)")
	failOn := flag.String("fail-on", "", "the default method's --fail-on (\"\": macprof diff's default)")
	spreadOnly := flag.Bool("spread", false, "report only each function's run-to-run spread of its share, per build")
	flag.Parse()
	if *add > 0 {
		dir, err := os.MkdirTemp("", "diffstat")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(dir)
		base, slow, err := builds(dir)
		if err != nil {
			fatal(err)
		}
		if err := collect(*pool, base, slow, *add, *jobs, *benchtime); err != nil {
			fatal(err)
		}
	}
	base, err := loadPool(*pool, "base")
	if err != nil {
		fatal(err)
	}
	slow, err := loadPool(*pool, "slow")
	if err != nil {
		fatal(err)
	}
	if len(base) < 2 || len(slow) < 2 {
		fatal(fmt.Errorf("%s: %d base and %d slow profiles, want at least 2 of each (-add N records more)", *pool, len(base), len(slow)))
	}
	if *spreadOnly {
		if err := spread(os.Stdout, map[string][]run{"base": base, "slow": slow}); err != nil {
			fatal(err)
		}
		return
	}
	name := "macprof diff, default flags"
	if *dispersion != 0 || *runSpread != 0 || *failOn != "" {
		name = fmt.Sprintf("macprof diff --dispersion %g --run-spread %g --fail-on %q", *dispersion, *runSpread, *failOn)
	}
	cfg := diff.Config{Dispersion: *dispersion, RunSpread: *runSpread}
	if *failOn != "" {
		th, err := diff.ParseThresholds(*failOn)
		if err != nil {
			fatal(err)
		}
		cfg.FailOn = th
	}
	methods := []method{{name: name + " (a fixed amount of work found from the runs' go test output)", cfg: cfg, auto: true}}
	if *failOn == "" {
		methods = append(methods, method{name: "macprof diff --fail-on " + diff.DefaultFailOn + " (shares alone, as for runs of a fixed duration)", cfg: diff.Config{FailOn: mustThresholds(diff.DefaultFailOn)}})
	}
	if *judgeAll {
		methods = append(methods,
			method{name: "macprof diff --run-spread -1 (the dispersion alone, the method before the run spread)", cfg: diff.Config{RunSpread: -1}},
			method{name: "macprof diff --load-following '' --dispersion 1 --run-spread -1 (every function judged, sampling alone assumed)", cfg: diff.Config{LoadFollowing: diff.NoLoadFollowing(), Dispersion: 1, RunSpread: -1}})
	}
	if err := report(os.Stdout, base, slow, []int{1, 3, 5}, methods, *blocked, *slide); err != nil {
		fatal(err)
	}
	if *resample > 0 {
		if err := resampled(os.Stdout, base, slow, []int{1, 3, 5}, methods, *resample, *seed, *local); err != nil {
			fatal(err)
		}
	}
}

func mustThresholds(s string) []diff.Threshold {
	th, err := diff.ParseThresholds(s)
	if err != nil {
		fatal(err)
	}
	return th
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "diffstat:", err)
	os.Exit(1)
}
