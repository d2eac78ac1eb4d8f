package diff

import "math"

// shareTest is what the comparison knows about one function's share (flat
// or cumulative) on both sides: per profile, its count and the total.
type shareTest struct {
	baseCount, baseTotal []int64
	newCount, newTotal   []int64
	// dispersion scales the binomial variance: how much more shares vary
	// from run to run than sampling alone explains (1 or more).
	dispersion float64
	// runVar is the variance of a share's log-odds from run to run (the
	// run spread squared): the part of the noise that more samples in a
	// run do not shrink, only more runs.
	runVar float64
	// runDF is the degrees of freedom runVar stands on (prior and
	// measured).
	runDF float64
}

// shareResult is the outcome of a shareTest: pooled shares, the change and
// its standard error.
type shareResult struct {
	base, new float64 // pooled shares, 0..1
	delta     float64 // new - base
	seBinom   float64 // sampling error of a count (two-proportion), times √dispersion
	seRun     float64 // the run spread's error of the change
	se        float64 // the whole standard error of the change
	// df is the standard error's degrees of freedom (Satterthwaite): the
	// sampling part is known, the run spread's only from a few profiles
	// and the prior, which a t quantile accounts for.
	df float64
}

// run computes the pooled shares and the standard error. Each sample is
// one draw, so a function's count is binomial in the profile's total; the
// dispersion widens that for the run-to-run noise sampling does not show
// (load, caches, clock). One factor over every function is used rather
// than each function's own spread: five profiles' spread of one share is
// itself so noisy that taking the larger of the two halved the power to
// find a 30% slowdown (bench/diffstat) without a false alarm less.
func (t *shareTest) run() shareResult {
	var r shareResult
	cb, nb := sum(t.baseCount), sum(t.baseTotal)
	cn, nn := sum(t.newCount), sum(t.newTotal)
	r.base, r.new = float64(cb)/float64(nb), float64(cn)/float64(nn)
	r.delta = r.new - r.base
	p := float64(cb+cn) / float64(nb+nn)
	r.seBinom = math.Sqrt(max(t.dispersion, 1) * p * (1 - p) * (1/float64(nb) + 1/float64(nn)))
	// A run that moves the log-odds by e moves the share by p(1-p)e; a
	// side's pooled share weighs each run by its samples.
	v := p * (1 - p)
	runVar, runDF := t.runVar, t.runDF
	if own, df := ownRunVar(t.baseCount, t.baseTotal, t.newCount, t.newTotal); df > 0 && runDF > 0 {
		// The statistic's own spread, moderated by the one of all
		// functions, where it is the larger: a function whose time
		// follows the load more than the largest ones' (a sort,
		// memory-bound, beside arithmetic) moves more, which one spread
		// for all understated. Never the smaller, nor more degrees of
		// freedom: a few profiles' spread of one share is too noisy to
		// narrow the bound (bench/diffstat).
		runVar = max(runVar, (runDF*runVar+float64(df)*max(own, 0))/(runDF+float64(df)))
	}
	r.seRun = math.Sqrt(runVar * v * v * (runWeight(t.baseTotal) + runWeight(t.newTotal)))
	r.se = math.Hypot(r.seBinom, r.seRun)
	r.df = math.Inf(1)
	if r.seRun > 0 && runDF > 0 {
		r.df = math.Pow(r.se/r.seRun, 4) * runDF
	}
	return r
}

// sampleMoments returns Σn and Σn² of the profiles' sample totals, and
// false when a profile has no samples (no share can be measured then).
func sampleMoments(totals []int64) (all, all2 float64, ok bool) {
	for _, n := range totals {
		if n <= 0 {
			return 0, 0, false
		}
		all += float64(n)
		all2 += float64(n) * float64(n)
	}
	return all, all2, true
}

// ownRunVar measures one statistic's run variance on the log-odds scale
// from its counts' spread between the profiles of each side, beyond
// sampling, pooled over the sides (estimateRunVar's estimate for one
// function), and its degrees of freedom: one fewer than the profiles of
// each side with two or more, summed.
func ownRunVar(bc, bt, nc, nt []int64) (float64, int) {
	var excess, weight float64
	df := 0
	for _, side := range [2][2][]int64{{bc, bt}, {nc, nt}} {
		counts, totals := side[0], side[1]
		k := len(counts)
		if k < 2 {
			continue
		}
		all, all2, ok := sampleMoments(totals)
		if !ok {
			return 0, 0
		}
		p := float64(sum(counts)) / all
		v := p * (1 - p)
		var ss float64
		for i, c := range counts {
			d := float64(c)/float64(totals[i]) - p
			ss += float64(totals[i]) * d * d
		}
		excess += ss - v*float64(k-1)
		weight += v * v * (all - all2/all)
		df += k - 1
	}
	if weight == 0 {
		return 0, 0
	}
	return excess / weight, df
}

// runWeight is Σn²/(Σn)² over a side's profiles: the variance of its
// pooled share, per unit of one run's variance (1/k for k equal runs).
func runWeight(totals []int64) float64 {
	var s, s2 float64
	for _, n := range totals {
		s += float64(n)
		s2 += float64(n) * float64(n)
	}
	if s == 0 {
		return 0
	}
	return s2 / (s * s)
}

// bound returns the change in share a function must exceed to be beyond
// noise at one-sided level alpha: the t quantile on the error's degrees
// of freedom times the standard error.
func (r shareResult) bound(alpha float64) float64 {
	return tQuantile(1-alpha, r.df) * r.se
}

// detectable is the minimum detectable rise at level alpha: the true
// change that passes the bound with probability power, under the same
// standard error.
func (r shareResult) detectable(alpha float64) float64 {
	return (tQuantile(1-alpha, r.df) + normalQuantile(power)) * r.se
}

func sum(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

// minExpected is the expected count below which a function joins the
// others in estimateDispersion: Pearson's statistic is unstable for
// smaller cells.
const minExpected = 5

// estimateDispersion is the quasi-binomial dispersion of one side's
// profiles: Pearson's chi-square of their flat counts against the pooled
// shares, over its degrees of freedom, with functions expected fewer than
// minExpected times in some profile merged into one cell. It pools every
// function's run-to-run spread into one factor, which a few profiles
// estimate far better than each function's own spread. It returns the
// statistic and its degrees of freedom (0 for fewer than two profiles).
func estimateDispersion(flat [][]int64, totals []int64) (chi2 float64, df int) {
	k := len(flat)
	if k < 2 {
		return 0, 0
	}
	var all int64
	minTotal := totals[0]
	for _, n := range totals {
		all += n
		minTotal = min(minTotal, n)
	}
	if all == 0 || minTotal == 0 {
		return 0, 0
	}
	keys := 0
	for _, v := range flat {
		keys = max(keys, len(v))
	}
	pooled := make([]int64, keys)
	for _, v := range flat {
		for j, c := range v {
			pooled[j] += c
		}
	}
	other := make([]int64, k)
	var otherPooled int64
	cells := 0
	add := func(c []int64, pool int64) {
		p := float64(pool) / float64(all)
		for i := range k {
			e := p * float64(totals[i])
			d := float64(c[i]) - e
			chi2 += d * d / e
		}
		cells++
	}
	col := make([]int64, k)
	for j := range keys {
		if pooled[j] == 0 {
			continue
		}
		for i := range k {
			col[i] = at(flat[i], j)
		}
		if float64(pooled[j])/float64(all)*float64(minTotal) < minExpected {
			for i := range k {
				other[i] += col[i]
			}
			otherPooled += pooled[j]
			continue
		}
		add(col, pooled[j])
	}
	if otherPooled > 0 {
		add(other, otherPooled)
	}
	if cells < 2 {
		return 0, 0
	}
	return chi2, (k - 1) * (cells - 1)
}

// estimateRunVar measures one side's run spread: how much the log-odds of
// the functions' flat shares move from profile to profile beyond sampling.
// For each function with a share p of the side's samples, the profiles'
// squared deviations from p (each weighted by its samples) exceed what
// sampling gives, p(1-p) per degree of freedom, by about the run
// variance times (p(1-p))² (Σn - Σn²/Σn); summed over functions, the
// ratio is the estimate. The weights make the largest functions count most:
// their shares move with the load the most (bench/diffstat: a benchmark's
// main loop at two thirds of the time, 14% on the log-odds scale, where the
// pooled chi-square, ruled by the many small functions, read 1.4). It
// returns the estimate, which may be below zero by chance, and its degrees
// of freedom, one fewer than the profiles (0 for fewer than two).
func estimateRunVar(flat [][]int64, totals []int64) (float64, int) {
	k := len(flat)
	if k < 2 {
		return 0, 0
	}
	all, all2, ok := sampleMoments(totals)
	if !ok {
		return 0, 0
	}
	keys := 0
	for _, v := range flat {
		keys = max(keys, len(v))
	}
	var excess, weight float64
	for j := range keys {
		var c int64
		for i := range k {
			c += at(flat[i], j)
		}
		if c == 0 {
			continue
		}
		p := float64(c) / all
		v := p * (1 - p)
		var ss float64
		for i := range k {
			d := float64(at(flat[i], j))/float64(totals[i]) - p
			ss += float64(totals[i]) * d * d
		}
		excess += ss - v*float64(k-1)
		weight += v * v * (all - all2/all)
	}
	if weight == 0 {
		return 0, 0
	}
	return excess / weight, k - 1
}

// normalQuantile is the inverse of the standard normal distribution
// function.
func normalQuantile(p float64) float64 {
	return -math.Sqrt2 * math.Erfcinv(2*p)
}

// tQuantile is the inverse of Student's t distribution function with df
// degrees of freedom (the normal one for df above 1e6): Newton's method on
// tCDF from the normal quantile, which is below the answer for p > 1/2.
func tQuantile(p, df float64) float64 {
	z := normalQuantile(p)
	if df > 1e6 || math.IsInf(df, 1) || p == 0.5 {
		return z
	}
	if p < 0.5 {
		return -tQuantile(1-p, df)
	}
	lg1, _ := math.Lgamma((df + 1) / 2)
	lg2, _ := math.Lgamma(df / 2)
	logNorm := lg1 - lg2 - 0.5*math.Log(df*math.Pi)
	t := z
	for range 100 {
		pdf := math.Exp(logNorm - (df+1)/2*math.Log1p(t*t/df))
		step := (tCDF(t, df) - p) / pdf
		// The distribution function is concave above 0, so Newton's steps
		// from below never overshoot; halve a step that would cross 0.
		if t-step <= 0 {
			step = t / 2
		}
		t -= step
		if math.Abs(step) <= 1e-12*t {
			break
		}
	}
	return t
}

// tCDF is Student's t distribution function: P(T <= t) with df degrees of
// freedom, from the regularized incomplete beta function.
func tCDF(t, df float64) float64 {
	x := df / (df + t*t)
	tail := 0.5 * betaInc(df/2, 0.5, x)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// betaInc is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (Lentz's method), on the side where it converges fast.
func betaInc(a, b, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		for i := range 2 {
			if i == 1 {
				num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
			}
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			h *= d * c
		}
		if math.Abs(d*c-1) < 1e-15 {
			break
		}
	}
	return h
}

// pooledSpread is a spread measured on each side (variances v1 and v2 on
// df1 and df2 degrees of freedom) pooled with a prior counted as
// runPriorDF degrees of freedom, and the degrees of freedom measured. A
// prior of 0 means def, a negative one none: a few profiles alone
// understate the spread (bench/diffstat).
func pooledSpread(prior, def, v1 float64, df1 int, v2 float64, df2 int) (spread float64, df int) {
	switch {
	case prior == 0:
		prior = def
	case prior < 0:
		prior = 0
	}
	df = df1 + df2
	return math.Sqrt(max(0, (prior*prior*runPriorDF+v1*float64(df1)+v2*float64(df2))/float64(runPriorDF+df))), df
}
