package main

import (
	"io"

	"github.com/macprof/macprof/diff"
	"github.com/macprof/macprof/internal/cli"
)

func init() {
	register(command{name: "diff", summary: "compare a baseline's profiles with a candidate's; exit 1 on a significant regression", run: runDiff})
}

func runDiff(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("diff", "macprof diff [flags] BASE NEW", diff.Help, stderr)
	var bases, news, failOn, outs multiFlag
	fs.Var(&bases, "base", "a baseline `PROFILE`, directory or pattern (repeatable)")
	fs.Var(&news, "new", "a candidate `PROFILE`, directory or pattern (repeatable)")
	fs.Var(&failOn, "fail-on", "`THRESHOLDS` a significant rise must reach to fail (default "+diff.DefaultFailOn+")")
	focus := fs.String("focus", "", "judge only functions whose name matches `REGEX`")
	ignore := fs.String("ignore", "", "do not judge functions whose name matches `REGEX`")
	loadFollowing := fs.String("load-following", diff.DefaultLoadFollowing, "set apart, unjudged, the samples under functions whose name matches `REGEX`, as their share follows load ('' for none)")
	alpha := fs.Float64("alpha", diff.DefaultAlpha, "one-sided significance `LEVEL` of the whole decision")
	dispersion := fs.Float64("dispersion", diff.DefaultDispersion, "run-to-run `VARIANCE` of shares over sampling's, assumed when no side has two profiles to measure it")
	runSpread := fs.Float64("run-spread", diff.DefaultRunSpread, "run-to-run standard deviation of a share's log-odds (`SD`) assumed beside what two or more profiles a side measure (negative: none)")
	timeSpread := fs.Float64("time-spread", diff.DefaultTimeSpread, "run-to-run relative standard deviation (`SD`) of a function's own time assumed by --fail-on time (negative: none)")
	fixedWork := fs.Bool("fixed-work", false, "the profiles record a fixed amount of work (go test -benchtime Nx): judge a function's own time too (found by default from 'go test -bench' outputs beside the profiles)")
	format := fs.String("format", "text", "`FORMAT` of the report on stdout: text, markdown or json")
	top := fs.Int("top", diff.DefaultTop, "list `N` functions in the report (regressions always; -1: all)")
	fs.Var(&outs, "o", "also write `FILE`: .svg flame graph, .pb.gz pprof diff, .md/.json/.txt report (repeatable)")
	// Flags may follow the positional arguments, as CI scripts often
	// write them.
	var pos []string
	for {
		if st, ok := fs.ParseArgs(args); !ok {
			return st
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if n := len(pos); (len(bases) == 0 && len(news) == 0 && n != 2) || ((len(bases) > 0 || len(news) > 0) && (n > 0 || len(bases) == 0 || len(news) == 0)) {
		return fs.UsageError("give BASE and NEW (or --base and --new), e.g. macprof diff base.pb.gz new.pb.gz")
	}
	return diff.Main(diff.Args{Base: bases, New: news, Positional: pos, FailOn: failOn, Outputs: outs,
		Focus: *focus, Ignore: *ignore, LoadFollowing: *loadFollowing, Format: *format, Alpha: *alpha, Top: *top, Dispersion: *dispersion, RunSpread: *runSpread, TimeSpread: *timeSpread, FixedWork: *fixedWork}, stdout, stderr)
}
