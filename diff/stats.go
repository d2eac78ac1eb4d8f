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
}

// shareResult is the outcome of a shareTest: pooled shares, the change and
// its standard error.
type shareResult struct {
	base, new float64 // pooled shares, 0..1
	delta     float64 // new - base
	seBinom   float64 // sampling error of a count (two-proportion), times √dispersion
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
	return r
}

// bound returns the change in share a function must exceed to be beyond
// noise at one-sided level alpha: the normal quantile times the standard
// error.
func (r shareResult) bound(alpha float64) float64 {
	return normalQuantile(1-alpha) * r.seBinom
}

// detectable is the minimum detectable rise at level alpha: the true
// change that passes the bound with probability power, under the same
// standard error.
func (r shareResult) detectable(alpha float64) float64 {
	return (normalQuantile(1-alpha) + normalQuantile(power)) * r.seBinom
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

// normalQuantile is the inverse of the standard normal distribution
// function.
func normalQuantile(p float64) float64 {
	return -math.Sqrt2 * math.Erfcinv(2*p)
}
