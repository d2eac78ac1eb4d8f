package diff

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/macprof/macprof/internal/safefile"
)

// Help is the description `macprof diff --help` prints: what is compared,
// the test that decides, the thresholds, the exit status and the outputs.
const Help = `
Compares the profiles of a baseline (BASE) with those of a candidate (NEW)
function by function, and exits 1 when a function got more expensive by
more than run-to-run noise and by at least a --fail-on threshold: one
command for a CI job. BASE and NEW are each a profile, a directory or a
quoted pattern ('base/*.pb.gz'); --base and --new (repeatable) give more. A
directory's files are chosen by content: those that are not profiles
('go test -bench' output, test binaries) are skipped and listed. Inputs: macprof's pprof, Go's runtime/pprof and 'go test
-cpuprofile' output, any valid pprof, and folded stacks. Functions are
matched by name (and file, when every profile has files), not by address,
so two builds compare.

Per function: its flat share (samples where it is the leaf) and cumulative
share (samples with it anywhere on the stack) of each side's total, so
profiles of different length compare; the change in percentage points (pp)
and relative to the base.

The test. A function's count is binomial in the profile's total (each
sample is one draw), so a change in share has a binomial standard error.
Shares vary from run to run more than sampling explains, in two ways. All
of them a little (a dispersion scales the binomial variance: a prior,
--dispersion, default 2.5, counted as 20 degrees of freedom, combined with
Pearson's chi-square of all functions' shares between a side's profiles),
and the large ones much more, as load and caches move a function's time
against the rest: a run spread, the standard deviation of a share's
log-odds from run to run (a prior, --run-spread, default 0.12, counted as
4 degrees of freedom, combined with what two or more profiles a side
measure). The run spread's part of the variance, (p(1-p) x spread)² per
run, shrinks with more profiles, not with longer ones. A function fails
when its rise passes the t quantile (on the degrees of freedom the
variance stands on) times the standard error and reaches a threshold. The
level --alpha is for the whole decision, split (Bonferroni) over the
changes that reach a threshold. Record five or more times a side: one
profile a side finds only large changes of large functions. Each
function's mde is the smallest rise this data would have found 80% of the
time: record more profiles when the change you care about is below it.

Load-following functions (--load-following, by default Go's asynchronous
preemption, background and assisting garbage collection, scheduler and
system monitor, [unsampled] and [lost: ...]) have a share that follows the machine's
load, not the code: the samples under them are left out of every judged
share and listed apart, never judged. docs/CI.md has the false-alarm and
detection rates measured by bench/diffstat.

Thresholds (--fail-on, comma-separated or repeated; any one fails):
  flat:+Npp, cum:+Npp   a rise of N percentage points of the total
  flat:+N%, cum:+N%     a rise of N% relative to the base share
  total:+N%             the mean total (CPU time) rose by N%; only for
                        recordings of a fixed amount of work
  time:+N%              a function's own time per profile (its flat
                        samples, preempted ones included) rose by N%,
                        tested against its spread between profiles and a
                        prior (--time-spread 0.08): only for profiles of a
                        fixed amount of work (go test -benchtime 20000x),
                        where it finds far smaller changes than shares do
Default: flat:+1pp,cum:+1pp; for profiles of a fixed amount of work
(--fixed-work, or found when each side's directory holds 'go test -bench'
outputs of the same iteration counts in every run, -benchtime Nx) and with
a sampling period, time:+10% as well; the report then shows each
function's own time change and its noise beside the shares.

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

// Args are the command line's values, as given: Main checks them.
type Args struct {
	Base, New  []string // --base and --new, each repeatable
	Positional []string // BASE NEW, when --base and --new are not given
	FailOn     []string
	Outputs    []string // -o files, by extension
	Focus      string
	Ignore     string
	// LoadFollowing is --load-following: a regular expression, "" for
	// none.
	LoadFollowing string
	Format        string
	Alpha         float64
	Top           int
	// Dispersion is --dispersion, the prior for one profile a side.
	Dispersion float64
	// RunSpread is --run-spread, the prior run spread (0 the default,
	// negative none).
	RunSpread float64
	// TimeSpread is --time-spread, the prior time spread (0 the default,
	// negative none).
	TimeSpread float64
	// FixedWork is --fixed-work: the profiles record a fixed amount of
	// work. Without it, a directory of each side holding `go test -bench`
	// outputs with the same iteration counts says so.
	FixedWork bool
}

// Main runs `macprof diff`: it checks a, compares, writes the report to
// stdout and each output, names the regressions on stderr, and returns the
// exit status (0 none, 1 regression, 2 usage or input error).
func Main(a Args, stdout, stderr io.Writer) int {
	bases, news := a.Base, a.New
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "macprof diff: "+format+"\n", a...)
		return 2
	}
	switch {
	case len(bases) == 0 && len(news) == 0 && len(a.Positional) == 2:
		bases, news = []string{a.Positional[0]}, []string{a.Positional[1]}
	case len(bases) > 0 && len(news) > 0 && len(a.Positional) == 0:
	default:
		return fail("give BASE and NEW (or --base and --new), e.g. macprof diff base.pb.gz new.pb.gz")
	}
	cfg := Config{Top: a.Top, Alpha: a.Alpha, Dispersion: a.Dispersion, RunSpread: a.RunSpread, TimeSpread: a.TimeSpread}
	if a.Alpha <= 0 || a.Alpha >= 1 {
		return fail("--alpha must be between 0 and 1, not %g", a.Alpha)
	}
	if a.Dispersion != 0 && (a.Dispersion < 1 || a.Dispersion > 100) {
		return fail("--dispersion must be between 1 and 100, not %g", a.Dispersion)
	}
	if a.RunSpread > 2 || a.RunSpread != a.RunSpread {
		return fail("--run-spread must be at most 2 (a negative value: none), not %g", a.RunSpread)
	}
	if a.TimeSpread > 2 || a.TimeSpread != a.TimeSpread {
		return fail("--time-spread must be at most 2 (a negative value: none), not %g", a.TimeSpread)
	}
	f, err := ParseFormat(a.Format)
	if err != nil {
		return fail("%v", err)
	}
	if len(a.FailOn) > 0 {
		if cfg.FailOn, err = ParseThresholds(strings.Join(a.FailOn, ",")); err != nil {
			return fail("%v", err)
		}
	}
	for _, re := range []struct {
		flag, expr string
		dst        **regexp.Regexp
	}{{"focus", a.Focus, &cfg.Focus}, {"ignore", a.Ignore, &cfg.Ignore}} {
		if re.expr == "" {
			continue
		}
		if *re.dst, err = regexp.Compile(re.expr); err != nil {
			return fail("--%s: %v", re.flag, err)
		}
	}
	cfg.LoadFollowing = NoLoadFollowing()
	if a.LoadFollowing != "" {
		if cfg.LoadFollowing, err = regexp.Compile(a.LoadFollowing); err != nil {
			return fail("--load-following: %v", err)
		}
	}
	kinds := make([]string, len(a.Outputs))
	for i, o := range a.Outputs {
		if kinds[i], err = OutputFor(o); err != nil {
			return fail("%v", err)
		}
	}
	var skipBase, skipNew []string
	if cfg.Base, skipBase, err = Expand(bases); err != nil {
		return fail("%v", err)
	}
	if cfg.New, skipNew, err = Expand(news); err != nil {
		return fail("%v", err)
	}
	cfg.FixedWork = a.FixedWork || FixedWork(benchOutputs(bases), benchOutputs(news))
	rep, err := Run(cfg)
	if err != nil {
		return fail("%v", err)
	}
	rep.Base.Skipped, rep.New.Skipped = skipBase, skipNew
	for _, s := range append(skipBase, skipNew...) {
		fmt.Fprintf(stderr, "macprof diff: skipped, not a profile: %s\n", s)
	}
	warnUnrelated(stderr, rep)
	if err := rep.Write(stdout, f); err != nil {
		return fail("%v", err)
	}
	for i, o := range a.Outputs {
		var b bytes.Buffer
		if err := rep.WriteOutput(&b, kinds[i]); err != nil {
			return fail("%v", err)
		}
		if err := safefile.WriteOutput(o, b.Bytes()); err != nil {
			return fail("%v", err)
		}
	}
	if len(rep.Regressions) == 0 {
		return 0
	}
	for _, fn := range rep.Functions {
		if len(fn.Failed) > 0 {
			fmt.Fprintf(stderr, "macprof diff: regression: %s (flat %s, cum %s; fails %s)\n", fn.Name,
				describe(fn.Flat), describe(fn.Cum), strings.Join(fn.Failed, ","))
		}
	}
	if rep.Total.Significant && rep.Regressions[len(rep.Regressions)-1] == "total" {
		fmt.Fprintf(stderr, "macprof diff: regression: total %+.1f%% (noise ±%.1f%%)\n", rep.Total.Delta, rep.Total.Noise)
	}
	return 1
}

func describe(c Change) string {
	return fmt.Sprintf("%.2f%% -> %.2f%%, %+.2fpp ±%.2f", c.Base, c.New, c.Delta, c.Noise)
}

// warnUnrelated says when most of one side's own time is in functions the
// other side does not show: profiles of another program or another build,
// where every function reads as a change.
func warnUnrelated(w io.Writer, rep *Report) {
	var onlyNew, onlyBase float64
	for _, fn := range rep.Functions {
		if fn.Flat.Base == 0 {
			onlyNew += fn.Flat.New
		}
		if fn.Flat.New == 0 {
			onlyBase += fn.Flat.Base
		}
	}
	if onlyNew >= 50 || onlyBase >= 50 {
		fmt.Fprintf(w, "macprof diff: warning: %.0f%% of NEW's own time is in functions BASE does not show, %.0f%% of BASE's in functions NEW does not: are these profiles of one program?\n", onlyNew, onlyBase)
	}
}
