// Package diff compares a baseline's profiles with a candidate's, function by
// function, and decides whether any function got more expensive by more
// than run-to-run noise: the logic of `macprof diff`.
package diff

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"sync"
)

// Defaults for the zero values of Config.
const (
	// DefaultAlpha is the one-sided level of the whole decision: the
	// chance, under the tests' model, that a build compared with itself
	// fails.
	DefaultAlpha = 0.001
	// DefaultTop is the number of functions the text and markdown reports
	// list.
	DefaultTop = 20
	// DefaultLoadFollowing matches the functions whose share follows the
	// machine's load rather than the code: Go's asynchronous preemption,
	// its background and assisting garbage collection, its scheduler and
	// system monitor, and macprof's CPU time without a stack ([unsampled],
	// and samples the kernel dropped, [lost: REASON]). On a loaded machine
	// runtime.asyncPreempt alone moved by several points between runs of
	// the same build, more than sampling explains.
	DefaultLoadFollowing = `^runtime\.(asyncPreempt|gcBgMarkWorker|gcAssistAlloc|bgsweep|bgscavenge|sysmon|mstart|mcall|gcStart|forEachP)$|^\[unsampled\]$|^\[lost(: [^]]*)?\]$`
	// power is the chance of finding a rise at the minimum detectable
	// change a report states.
	power = 0.8
	// DefaultDispersion is the run-to-run dispersion assumed when neither
	// side has two profiles to measure it: the variance of a function's
	// share over the binomial one. bench/diffstat measured 1.7 to 2.2 for
	// a benchmark's main function over 200 runs a build on a loaded
	// machine (bench/RESULTS.md).
	DefaultDispersion = 2.5
	// priorDF is the weight of the assumed dispersion, in degrees of
	// freedom, against the measured one.
	priorDF = 20
	// DefaultRunSpread is the run spread assumed beside what the profiles
	// measure: the standard deviation, from run to run, of a function's
	// share on the log-odds scale (0.12: a share of 50% moving by 3
	// points). bench/diffstat measured 0.11 to 0.19 for its benchmark's
	// main loop, at half the time, on a loaded machine (bench/RESULTS.md).
	DefaultRunSpread = 0.12
	// DefaultTimeSpread is the time spread assumed beside what the
	// profiles measure: the relative standard deviation of a function's
	// own time from run to run, for a fixed amount of work. bench/diffstat
	// measured about 0.05 for its benchmark's main loop on a loaded
	// machine, whose load moved it by up to 20% over an hour.
	DefaultTimeSpread = 0.08
	// runPriorDF is the weight of the assumed run spread, in degrees of
	// freedom, against the measured one (one per profile beyond the first,
	// on each side).
	runPriorDF = 4
)

// NoLoadFollowing returns the Config.LoadFollowing that judges every
// function. It is compiled on first use: a regexp compiled at start-up
// was a percent of the CPU time of every macprof command (snapshot's).
var NoLoadFollowing = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\b\B$`) })

// defaultLoadFollowing is compiled on first use, not at start-up, which
// every macprof command pays.
var defaultLoadFollowing = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(DefaultLoadFollowing) })

// Config is what one comparison judges and how.
type Config struct {
	// Base and New are the profiles of each side (Expand turns
	// directories and patterns into paths).
	Base, New []string
	// FailOn are the thresholds a significant change must also reach; nil
	// means DefaultFailOn, or FixedWorkFailOn when FixedWork is set and
	// every profile has a sampling period.
	FailOn []Threshold
	// FixedWork says each profile records a fixed amount of work (a
	// benchmark run a count of iterations, FixedWork's test), so that a
	// function's own time per profile compares.
	FixedWork bool
	// Focus, when set, limits the judged functions to those whose name
	// matches; Ignore drops those whose name matches. Shares stay shares
	// of the whole profile, less the samples LoadFollowing sets apart.
	Focus, Ignore *regexp.Regexp
	// Alpha is the one-sided significance level of the whole decision
	// (Bonferroni over the changes that reach a threshold); 0 means
	// DefaultAlpha.
	Alpha float64
	// Top is the number of functions the text and markdown reports list;
	// 0 means DefaultTop, a negative value all.
	Top int
	// Dispersion is the run-to-run dispersion to assume; 0 means
	// DefaultDispersion. With two or more profiles on a side it is
	// combined with the measured one (estimateDispersion), weighted as
	// priorDF degrees of freedom; never below 1.
	Dispersion float64
	// RunSpread is the run spread to assume (DefaultRunSpread when 0, none
	// when negative): the standard deviation of a share's log-odds from
	// run to run, which more samples in a run do not shrink. With two or
	// more profiles on a side it is combined with the measured one
	// (estimateRunVar), weighted as runPriorDF degrees of freedom.
	RunSpread float64
	// TimeSpread is the time spread to assume for the time metric
	// (DefaultTimeSpread when 0, none when negative), combined with what
	// two or more profiles a side measure, as RunSpread.
	TimeSpread float64
	// LoadFollowing matches the functions set apart: a sample with one of
	// them on its stack counts in no judged share and is reported under
	// the outermost such function. nil means DefaultLoadFollowing,
	// NoLoadFollowing none.
	LoadFollowing *regexp.Regexp
}

// Run loads both sides and compares them. Errors are the caller's or the
// input's (a usage error, exit status 2), never a regression.
func Run(c Config) (*Report, error) {
	if len(c.Base) == 0 || len(c.New) == 0 {
		return nil, errors.New("give at least one profile on each side")
	}
	load := func(paths []string) ([]*Profile, error) {
		ps := make([]*Profile, 0, len(paths))
		for _, p := range paths {
			prof, err := Load(p)
			if err != nil {
				return nil, err
			}
			ps = append(ps, prof)
		}
		return ps, nil
	}
	base, err := load(c.Base)
	if err != nil {
		return nil, err
	}
	nw, err := load(c.New)
	if err != nil {
		return nil, err
	}
	return Compare(base, nw, c)
}

// Report is the outcome of a comparison.
type Report struct {
	// Kind is what the samples measure ("cpu", "wall"; "" when only folded
	// stacks were given).
	Kind string `json:"kind,omitempty"`
	Base Side   `json:"base"`
	New  Side   `json:"new"`
	// Dispersion is the variance of shares over the binomial one the
	// test assumed: the prior, combined with what the profiles' spread
	// measured on DispersionDF degrees of freedom (0 with one a side).
	Dispersion   float64 `json:"dispersion"`
	DispersionDF int     `json:"dispersion_df"`
	// RunSpread is the run-to-run standard deviation of a share's
	// log-odds the test assumed: the prior, combined with what the
	// profiles measured on RunSpreadDF degrees of freedom.
	RunSpread   float64 `json:"run_spread"`
	RunSpreadDF int     `json:"run_spread_df"`
	// TimeSpread is the relative run-to-run standard deviation of a
	// function's own time the time metric assumed (0 without a time
	// threshold), on TimeSpreadDF measured degrees of freedom.
	TimeSpread   float64 `json:"time_spread,omitempty"`
	TimeSpreadDF int     `json:"time_spread_df,omitempty"`
	// Alpha is the level of the whole decision and Tests the number of
	// statistics it was split over: the changes that reach a threshold, a
	// function's flat and cum share once when they are equal (a function
	// that calls nothing).
	Alpha  float64  `json:"alpha"`
	Tests  int      `json:"tests"`
	FailOn []string `json:"fail_on"`
	// FixedWork says the profiles were taken as records of a fixed amount
	// of work (the same benchmark iterations in every run).
	FixedWork bool `json:"fixed_work,omitempty"`
	// Method states the test used, in one sentence.
	Method string `json:"method"`
	// Total compares the sides' mean totals; it is judged only when a
	// total threshold is set.
	Total Change `json:"total"`
	// Functions are the judged functions: regressions first (worst
	// first), then by the size of their change.
	Functions []Function `json:"functions"`
	// Regressions names the functions that failed, worst first; "total"
	// when the total did.
	Regressions []string `json:"regressions"`
	// LoadFollowing are the functions set apart because their share
	// follows load, largest change first; never judged.
	LoadFollowing []Apart `json:"load_following,omitempty"`

	top                int
	baseProfs, newProf []*Profile
	keyed              bool // frames matched by name and file
}

// Side summarises one side's inputs.
type Side struct {
	Profiles []string `json:"profiles"`
	Samples  []int64  `json:"samples"`
	// Skipped are the files of a directory given for this side that are
	// not profiles, each with the reason.
	Skipped []string `json:"skipped,omitempty"`
}

// Function is one function's change.
type Function struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	Flat Change `json:"flat"`
	Cum  Change `json:"cum"`
	// Time is the change of its own time per profile, relative (in
	// percent), when a time threshold is set.
	Time *Change `json:"time,omitempty"`
	// Failed lists the thresholds this function reached with a
	// significant change; non-empty means a regression.
	Failed []string `json:"failed,omitempty"`
}

// Apart is a load-following function's share of all samples (under it on
// the stack), in percent, on both sides.
type Apart struct {
	Name  string  `json:"name"`
	Base  float64 `json:"base_pct"`
	New   float64 `json:"new_pct"`
	Delta float64 `json:"delta_pp"`
}

// Change is one metric's change. Shares and changes are in percent of the
// total and percentage points; Total's are relative, in percent.
type Change struct {
	Base  float64 `json:"base_pct"`
	New   float64 `json:"new_pct"`
	Delta float64 `json:"delta_pp"`
	// Relative is the change relative to the base in percent, absent
	// when the base is zero.
	Relative *float64 `json:"relative_pct,omitempty"`
	// Noise is the change, in the same unit as Delta, that a rise must
	// exceed to be beyond noise at the report's level.
	Noise float64 `json:"noise_pp"`
	// MDE is the minimum detectable rise: the change, in the same unit,
	// this data would have found 80% of the time at the report's level.
	MDE float64 `json:"mde_pp"`
	// Z is Delta over the binomial standard error times √dispersion.
	Z           float64 `json:"z"`
	Significant bool    `json:"significant"`
}

// Compare compares two sides' profiles.
func Compare(base, nw []*Profile, c Config) (*Report, error) {
	if len(base) == 0 || len(nw) == 0 {
		return nil, errors.New("give at least one profile on each side")
	}
	if c.FailOn == nil {
		spec := DefaultFailOn
		if c.FixedWork && timed(base) && timed(nw) {
			spec = FixedWorkFailOn
		}
		c.FailOn, _ = ParseThresholds(spec)
	}
	if c.Alpha <= 0 || c.Alpha >= 1 {
		c.Alpha = DefaultAlpha
	}
	if c.Top == 0 {
		c.Top = DefaultTop
	}
	r := &Report{Alpha: c.Alpha, FixedWork: c.FixedWork, top: c.Top, baseProfs: base, newProf: nw}
	all := append(append([]*Profile(nil), base...), nw...)
	for _, p := range all {
		if p.Kind == "" {
			continue
		}
		if r.Kind == "" {
			r.Kind = p.Kind
		} else if p.Kind != r.Kind {
			return nil, fmt.Errorf("%s measures %s but another profile %s: compare profiles of one sample type", p.Path, p.Kind, r.Kind)
		}
	}
	for _, p := range base {
		r.Base.Profiles, r.Base.Samples = append(r.Base.Profiles, p.Path), append(r.Base.Samples, p.Samples)
	}
	for _, p := range nw {
		r.New.Profiles, r.New.Samples = append(r.New.Profiles, p.Path), append(r.New.Samples, p.Samples)
	}
	for _, t := range c.FailOn {
		r.FailOn = append(r.FailOn, t.String())
	}
	r.keyed = true
	for _, p := range all {
		r.keyed = r.keyed && hasFiles(p)
	}
	r.Method = method(len(base), len(nw))

	lf := c.LoadFollowing
	if lf == nil {
		lf = defaultLoadFollowing()
	}
	judgedProfs, apart := splitLoadFollowing(all, lf)
	r.LoadFollowing = apartShares(apart, all, len(base))
	ct := count(judgedProfs, r.keyed)
	nb := len(base)
	totals := make([]int64, len(all))
	for i, p := range judgedProfs {
		totals[i] = p.Samples
	}

	// Every change that reaches a threshold is a test the level is
	// shared over; the others cannot fail whatever their significance.
	type cand struct {
		fn     int
		metric Metric
		t      Threshold
		res    shareResult
		time   *timeResult // for the time metric, instead of res
		stat   [2]int      // the statistic tested: function and metric, flat for a cum equal to it
	}
	var cands []cand
	results := make([][2]shareResult, len(ct.keys))
	judged := make([]bool, len(ct.keys))
	cb, dfb := estimateDispersion(ct.flat[:nb], totals[:nb])
	cn, dfn := estimateDispersion(ct.flat[nb:], totals[nb:])
	prior := c.Dispersion
	if prior <= 0 {
		prior = DefaultDispersion
	}
	// The prior counts as priorDF degrees of freedom beside the measured
	// ones: a few profiles' chi-square alone came out at 1.0 on 14 degrees
	// of freedom where 200 runs measured 2 (bench/diffstat).
	r.DispersionDF = dfb + dfn
	r.Dispersion = max(1, (prior*priorDF+cb+cn)/float64(priorDF+r.DispersionDF))
	rb, rdfb := estimateRunVar(ct.flat[:nb], totals[:nb])
	rn, rdfn := estimateRunVar(ct.flat[nb:], totals[nb:])
	r.RunSpread, r.RunSpreadDF = pooledSpread(c.RunSpread, DefaultRunSpread, rb, rdfb, rn, rdfn)
	for k, key := range ct.keys {
		if (c.Focus != nil && !c.Focus.MatchString(key.Name)) || (c.Ignore != nil && c.Ignore.MatchString(key.Name)) {
			continue
		}
		if sum(totals[:nb]) == 0 || sum(totals[nb:]) == 0 {
			break // every sample of a side is set apart: nothing to judge
		}
		judged[k] = true
		for mi, counts := range [2][][]int64{ct.flat, ct.cum} {
			st := shareTest{baseTotal: totals[:nb], newTotal: totals[nb:], dispersion: r.Dispersion, runVar: r.RunSpread * r.RunSpread, runDF: float64(runPriorDF + r.RunSpreadDF)}
			for i := range all {
				v := at(counts[i], k)
				if i < nb {
					st.baseCount = append(st.baseCount, v)
				} else {
					st.newCount = append(st.newCount, v)
				}
			}
			res := st.run()
			results[k][mi] = res
			m := [2]Metric{Flat, Cum}[mi]
			stat := [2]int{k, mi}
			if mi == 1 && sameCounts(ct.flat, ct.cum, k) {
				stat[1] = 0
			}
			for _, t := range c.FailOn {
				if t.Metric == m && reaches(t, res.base, res.new) {
					cands = append(cands, cand{k, m, t, res, nil, stat})
				}
			}
		}
	}
	timeRes := r.compareTimes(all, nb, lf, ct.keys, judged, c)
	for k, tr := range timeRes {
		for _, t := range c.FailOn {
			if t.Metric == Time && tr.base > 0 && 100*(tr.new/tr.base-1) >= t.Value {
				cands = append(cands, cand{fn: k, metric: Time, t: t, time: &timeRes[k], stat: [2]int{k, 2}})
			}
		}
	}
	totalRes, totalJudged := r.compareTotal(base, nw, c.FailOn)
	// One test per statistic: a leaf-only function's cum share is its
	// flat share, the same test, and two thresholds of one metric judge
	// one statistic.
	stats := make(map[[2]int]bool)
	for _, cd := range cands {
		stats[cd.stat] = true
	}
	tests := len(stats)
	if totalJudged {
		tests++
	}
	r.Tests = tests
	alphaEach := c.Alpha / float64(max(tests, 1))

	failed := make(map[int][]string)
	for _, cd := range cands {
		if cd.time != nil {
			if cd.time.change(alphaEach).Significant {
				failed[cd.fn] = appendOnce(failed[cd.fn], cd.t.String())
			}
			continue
		}
		if cd.res.delta > 0 && cd.res.delta >= cd.res.bound(alphaEach) {
			failed[cd.fn] = appendOnce(failed[cd.fn], cd.t.String())
		}
	}
	names := displayNames(ct.keys, r.keyed)
	for k, key := range ct.keys {
		if !judged[k] {
			continue
		}
		f := Function{Name: names[k], Flat: change(results[k][0], alphaEach), Cum: change(results[k][1], alphaEach), Failed: failed[k]}
		if r.keyed {
			f.File = key.File
		}
		if timeRes != nil {
			tc := timeRes[k].change(alphaEach)
			f.Time = &tc
		}
		r.Functions = append(r.Functions, f)
	}
	sort.SliceStable(r.Functions, func(i, j int) bool {
		a, b := &r.Functions[i], &r.Functions[j]
		if (len(a.Failed) > 0) != (len(b.Failed) > 0) {
			return len(a.Failed) > 0
		}
		sa, sb := size(a), size(b)
		if sa != sb {
			return sa > sb
		}
		return a.Name < b.Name
	})
	for _, f := range r.Functions {
		if len(f.Failed) > 0 {
			r.Regressions = append(r.Regressions, f.Name)
		}
	}
	r.Total = totalRes.change(alphaEach)
	if totalJudged && r.Total.Significant {
		for _, t := range c.FailOn {
			if t.Metric == Total && r.Total.Relative != nil && *r.Total.Relative >= t.Value {
				r.Regressions = append(r.Regressions, "total")
				break
			}
		}
	}
	return r, nil
}

// sameCounts reports whether function k's flat and cum counts are equal in
// every profile: it is never a caller, so its two shares are one.
func sameCounts(flat, cum [][]int64, k int) bool {
	for i := range flat {
		if at(flat[i], k) != at(cum[i], k) {
			return false
		}
	}
	return true
}

// size orders functions: a regression by its largest failed rise, the
// others by their largest change either way; flat before cum on a tie so
// that a function slower in its own code comes before its callers.
func size(f *Function) float64 {
	if len(f.Failed) > 0 {
		return max(f.Flat.Delta+1e-9, f.Cum.Delta)
	}
	return max(math.Abs(f.Flat.Delta)+1e-9, math.Abs(f.Cum.Delta))
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// reaches reports whether a change from base to new share (0..1) reaches
// a threshold; a function new on this side reaches any relative one.
func reaches(t Threshold, base, nw float64) bool {
	if t.PP {
		return 100*(nw-base) >= t.Value && nw > base
	}
	if base == 0 {
		return nw > 0
	}
	return 100*(nw/base-1) >= t.Value && nw > base
}

func change(r shareResult, alpha float64) Change {
	c := Change{Base: 100 * r.base, New: 100 * r.new, Delta: 100 * r.delta, Noise: 100 * r.bound(alpha), MDE: 100 * r.detectable(alpha)}
	if r.base > 0 {
		rel := 100 * (r.new/r.base - 1)
		c.Relative = &rel
	}
	if r.se > 0 {
		c.Z = r.delta / r.se
	}
	c.Significant = c.Delta > 0 && c.Delta >= c.Noise
	return c
}

// method states the test in one sentence for the report.
func method(kb, kn int) string {
	s := "z-test on each function's share; its variance is the binomial one (each sample one draw) times the dispersion, plus the run spread's, (p(1-p) x run spread)² per run averaged over each side's runs"
	if kb >= 2 || kn >= 2 {
		s += " (priors combined with the spread measured between profiles; a share's own spread, moderated by it, where larger)"
	} else {
		s += " (the priors alone: one profile a side cannot show the run-to-run spread)"
	}
	return s + "; one-sided, Bonferroni over the changes that reach a --fail-on threshold"
}

// timed reports whether every profile has a sampling period: its counts
// are time.
func timed(ps []*Profile) bool {
	for _, p := range ps {
		if p.Period <= 0 {
			return false
		}
	}
	return true
}

func hasFiles(p *Profile) bool {
	for _, s := range p.Stacks {
		for _, f := range s.Frames {
			if f.File != "" {
				return true
			}
		}
	}
	return false
}
