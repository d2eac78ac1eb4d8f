package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/macprof/macprof/diff"
)

func init() {
	register(command{name: "diff", summary: "compare a baseline's profiles with a candidate's; exit 1 on a significant regression", run: runDiff})
}

const diffHelp = `
Compares the profiles of a baseline (BASE) with those of a candidate (NEW)
function by function, and exits 1 when a function got more expensive by
more than run-to-run noise and by at least a --fail-on threshold: one
command for a CI job. BASE and NEW are each a profile, a directory of
profiles or a quoted pattern ('base/*.pb.gz'); --base and --new (repeatable)
give more. Inputs: macprof's pprof, Go's runtime/pprof and 'go test
-cpuprofile' output, any valid pprof, and folded stacks. Functions are
matched by name (and file, when every profile has files), not by address,
so two builds compare.

Per function: its flat share (samples where it is the leaf) and cumulative
share (samples with it anywhere on the stack) of each side's total, so
profiles of different length compare; the change in percentage points (pp)
and relative to the base.

The test. A function's count is binomial in the profile's total (each
sample is one draw), so a change in share has a binomial standard error;
one profile a side is a one-sided two-proportion z-test. With several
profiles a side, their shares' spread also shows run-to-run noise that
sampling does not explain (load, caches, clock): the standard error is then
the larger of the binomial one and Welch's from the per-profile shares
(with one profile on a side, the other side's spread stands for both). A
function fails when its rise passes the normal quantile times that error
and reaches a threshold. The level --alpha is for the whole decision,
split (Bonferroni) over the changes that reach a threshold: under the
model a build compared with itself fails with probability at most alpha.
Record three or more times a side: the spread then catches noise that
sampling does not explain. docs/CI.md has the false-alarm and detection
figures measured on the demo.

Thresholds (--fail-on, comma-separated or repeated; any one fails):
  flat:+Npp, cum:+Npp   a rise of N percentage points of the total
  flat:+N%, cum:+N%     a rise of N% relative to the base share
  total:+N%             the mean total (CPU time) rose by N%; only for
                        recordings of a fixed amount of work

Exit status: 0 no significant regression, 1 regression (the functions are
named on stderr, worst first), 2 usage or input error.

Outputs: the report on stdout (--format text, markdown for a pull-request
comment or $GITHUB_STEP_SUMMARY, json); each -o FILE by its extension:
.svg a differential flame graph (widths from NEW, red grew, blue shrank,
click to zoom), .pb.gz a pprof diff ('go tool pprof -top diff.pb.gz', base
scaled to NEW's total), .md, .json, .txt the report.

Examples:
  macprof diff base.pb.gz new.pb.gz
  macprof diff --format markdown -o diff.svg 'base/*.pb.gz' 'new/*.pb.gz' >> "$GITHUB_STEP_SUMMARY"
  macprof diff --fail-on cum:+5%,flat:+2pp --focus '^github.com/me/' base/ new/
  macprof diff --fail-on total:+10% base.cpu.pprof new.cpu.pprof
`

func runDiff(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("diff", "macprof diff [flags] BASE NEW", diffHelp, stderr)
	var bases, news, failOn, outs multiFlag
	fs.Var(&bases, "base", "a baseline `PROFILE`, directory or pattern (repeatable)")
	fs.Var(&news, "new", "a candidate `PROFILE`, directory or pattern (repeatable)")
	fs.Var(&failOn, "fail-on", "`THRESHOLDS` a significant rise must reach to fail (default "+diff.DefaultFailOn+")")
	focus := fs.String("focus", "", "judge only functions whose name matches `REGEX`")
	ignore := fs.String("ignore", "", "do not judge functions whose name matches `REGEX`")
	alpha := fs.Float64("alpha", diff.DefaultAlpha, "one-sided significance `LEVEL` of the whole decision")
	format := fs.String("format", "text", "`FORMAT` of the report on stdout: text, markdown or json")
	top := fs.Int("top", diff.DefaultTop, "list `N` functions in the report (regressions always; -1: all)")
	fs.Var(&outs, "o", "also write `FILE`: .svg flame graph, .pb.gz pprof diff, .md/.json/.txt report (repeatable)")
	// Flags may follow the positional arguments, as CI scripts often
	// write them.
	var pos []string
	for {
		if st, ok := parseFlags(fs, args); !ok {
			return st
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "macprof diff: "+format+"\n", a...)
		return 2
	}
	switch {
	case len(bases) == 0 && len(news) == 0 && len(pos) == 2:
		bases, news = multiFlag{pos[0]}, multiFlag{pos[1]}
	case len(bases) > 0 && len(news) > 0 && len(pos) == 0:
	default:
		return fail("give BASE and NEW (or --base and --new), e.g. macprof diff base.pb.gz new.pb.gz")
	}
	cfg := diff.Config{Top: *top, Alpha: *alpha}
	if *alpha <= 0 || *alpha >= 1 {
		return fail("--alpha must be between 0 and 1, not %g", *alpha)
	}
	f, err := diff.ParseFormat(*format)
	if err != nil {
		return fail("%v", err)
	}
	if len(failOn) > 0 {
		if cfg.FailOn, err = diff.ParseThresholds(strings.Join(failOn, ",")); err != nil {
			return fail("%v", err)
		}
	}
	for _, re := range []struct {
		flag, expr string
		dst        **regexp.Regexp
	}{{"focus", *focus, &cfg.Focus}, {"ignore", *ignore, &cfg.Ignore}} {
		if re.expr == "" {
			continue
		}
		if *re.dst, err = regexp.Compile(re.expr); err != nil {
			return fail("--%s: %v", re.flag, err)
		}
	}
	kinds := make([]string, len(outs))
	for i, o := range outs {
		if kinds[i], err = diff.OutputFor(o); err != nil {
			return fail("%v", err)
		}
	}
	if cfg.Base, err = diff.Expand(bases); err != nil {
		return fail("%v", err)
	}
	if cfg.New, err = diff.Expand(news); err != nil {
		return fail("%v", err)
	}
	rep, err := diff.Run(cfg)
	if err != nil {
		return fail("%v", err)
	}
	if err := rep.Write(stdout, f); err != nil {
		return fail("%v", err)
	}
	for i, o := range outs {
		if err := writeFile(o, func(w io.Writer) error { return rep.WriteOutput(w, kinds[i]) }); err != nil {
			return fail("%v", err)
		}
	}
	if len(rep.Regressions) == 0 {
		return 0
	}
	for _, fn := range rep.Functions {
		if len(fn.Failed) > 0 {
			fmt.Fprintf(stderr, "macprof diff: regression: %s (flat %s, cum %s; fails %s)\n", fn.Name,
				change(fn.Flat), change(fn.Cum), strings.Join(fn.Failed, ","))
		}
	}
	if rep.Total.Significant && rep.Regressions[len(rep.Regressions)-1] == "total" {
		fmt.Fprintf(stderr, "macprof diff: regression: total %+.1f%% (noise ±%.1f%%)\n", rep.Total.Delta, rep.Total.Noise)
	}
	return 1
}

func change(c diff.Change) string {
	return fmt.Sprintf("%.2f%% -> %.2f%%, %+.2fpp ±%.2f", c.Base, c.New, c.Delta, c.Noise)
}

// writeFile creates path and writes it with write, reporting the first
// error of either and of closing.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
