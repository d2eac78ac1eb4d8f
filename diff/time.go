package diff

import (
	"math"
	"regexp"
)

// interruptFrame is the frame Go's asynchronous preemption pushes on top
// of the code it interrupts: under load many of a loop's samples show it
// on top, in a proportion that follows the load.
const interruptFrame = "runtime.asyncPreempt"

// timeCounts is each profile's flat count per key of keys (the share
// tests' keys), a sample under the interrupt frame counted for the
// function it interrupted and other load-following samples left out, in
// units of the first profile's sampling period when every profile has one.
// A function's own time is what a fixed amount of work spends in it: on
// bench/diffstat's benchmark the main loop's varied 5% from run to run
// where its share, moved by the rest, varied 12-19% on the log-odds scale.
func timeCounts(ps []*Profile, lf *regexp.Regexp, keys []Frame, keyed bool) [][]float64 {
	ids := make(map[Frame]int, len(keys))
	for i, k := range keys {
		ids[k] = i
	}
	timed := true
	for _, p := range ps {
		timed = timed && p.Period > 0
	}
	out := make([][]float64, len(ps))
	for i, p := range ps {
		scale := 1.0
		if timed {
			scale = float64(p.Period) / float64(ps[0].Period)
		}
		c := make([]float64, len(keys))
		for _, s := range p.Stacks {
			leaf := len(s.Frames) - 1
			for j, f := range s.Frames {
				if lf.MatchString(f.Name) {
					leaf = -1
					if f.Name == interruptFrame && j > 0 {
						leaf = j - 1
					}
					break
				}
			}
			if leaf < 0 {
				continue
			}
			if id, ok := ids[key(s.Frames[leaf], keyed)]; ok {
				c[id] += float64(s.Count) * scale
			}
		}
		out[i] = c
	}
	return out
}

// estimateTimeVar measures one side's time spread: the variance of a
// function's time from run to run relative to its square, beyond what
// counting (Poisson) gives, pooled over the functions with at least
// minExpected samples a profile, weighted by their squared mean count (the
// largest weigh most). It returns the estimate, which may be below zero
// by chance, and its degrees of freedom, one fewer than the profiles.
func estimateTimeVar(counts [][]float64) (float64, int) {
	k := len(counts)
	if k < 2 {
		return 0, 0
	}
	var excess, weight float64
	for j := range counts[0] {
		var m float64
		for i := range k {
			m += counts[i][j]
		}
		m /= float64(k)
		if m < minExpected {
			continue
		}
		var ss float64
		for i := range k {
			d := counts[i][j] - m
			ss += d * d
		}
		excess += ss - float64(k-1)*m
		weight += float64(k-1) * m * m
	}
	if weight == 0 {
		return 0, 0
	}
	return excess / weight, k - 1
}

// timeResult compares one function's mean time per profile on both sides.
type timeResult struct {
	base, new float64 // mean counts per profile
	logRatio  float64 // ln(new/base)
	se, df    float64 // of logRatio, and its degrees of freedom
}

// compareTime tests a function's mean count per profile on the log scale.
// A run's variance, relative to the mean squared, is modelled as
// counting's and the time spread's, 1/m + spread² with m the pooled mean,
// worth timeDF degrees of freedom, and moderated by the function's own
// spread between its profiles (pooled within the sides): small functions'
// times moved with the load more than the largest's, which rule the
// measured spread. The log of the ratio of means has that variance over k
// a side, on the t distribution of the summed degrees of freedom.
func compareTime(base, nw []float64, timeVar, timeDF float64) timeResult {
	r := timeResult{base: mean(base), new: mean(nw), df: math.Inf(1)}
	if r.base <= 0 || r.new <= 0 {
		return r // absent on a side: the shares judge it
	}
	r.logRatio = math.Log(r.new / r.base)
	kb, kn := float64(len(base)), float64(len(nw))
	m := (r.base*kb + r.new*kn) / (kb + kn)
	v := 1/m + timeVar
	if d := kb + kn - 2; d > 0 {
		var ss float64
		for _, c := range base {
			ss += (c - r.base) * (c - r.base) / (r.base * r.base)
		}
		for _, c := range nw {
			ss += (c - r.new) * (c - r.new) / (r.new * r.new)
		}
		v = (timeDF*v + ss) / (timeDF + d)
		timeDF += d
	}
	r.se = math.Sqrt(v * (1/kb + 1/kn))
	r.df = timeDF
	return r
}

func (r timeResult) change(alpha float64) Change {
	if r.base <= 0 || r.new <= 0 || r.se <= 0 {
		return Change{}
	}
	rel := 100 * (r.new/r.base - 1)
	q := tQuantile(1-alpha, r.df)
	c := Change{Base: 100, New: 100 * r.new / r.base, Delta: rel, Relative: &rel,
		Noise: 100 * math.Expm1(q*r.se), MDE: 100 * math.Expm1((q+normalQuantile(power))*r.se)}
	if r.se > 0 {
		c.Z = r.logRatio / r.se
	}
	c.Significant = r.new > 0 && r.logRatio > 0 && r.logRatio >= q*r.se
	return c
}

// compareTimes compares each judged function's own time per profile when
// a time threshold is set (nil otherwise): the time spread is the prior
// (DefaultTimeSpread) combined with what two or more profiles a side
// measure, as the run spread is.
func (r *Report) compareTimes(all []*Profile, nb int, lf *regexp.Regexp, keys []Frame, judged []bool, c Config) []timeResult {
	want := false
	for _, t := range c.FailOn {
		want = want || t.Metric == Time
	}
	if !want {
		return nil
	}
	counts := timeCounts(all, lf, keys, r.keyed)
	vb, db := estimateTimeVar(counts[:nb])
	vn, dn := estimateTimeVar(counts[nb:])
	r.TimeSpread, r.TimeSpreadDF = pooledSpread(c.TimeSpread, DefaultTimeSpread, vb, db, vn, dn)
	out := make([]timeResult, len(keys))
	for k := range keys {
		if !judged[k] {
			continue
		}
		b, n := make([]float64, nb), make([]float64, len(all)-nb)
		for i := range all {
			if i < nb {
				b[i] = counts[i][k]
			} else {
				n[i-nb] = counts[i][k]
			}
		}
		out[k] = compareTime(b, n, r.TimeSpread*r.TimeSpread, runPriorDF)
	}
	return out
}
