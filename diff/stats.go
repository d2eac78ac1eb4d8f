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

// shareResult is the outcome of a shareTest: pooled shares, the change, the
// standard errors of the change and the bound a change must pass.
type shareResult struct {
	base, new float64 // pooled shares, 0..1
	delta     float64 // new - base
	seBinom   float64 // sampling error of a count (two-proportion), times √dispersion
	seSpread  float64 // from the spread of the per-profile shares, 0 without
}

// run computes the pooled shares and both standard errors. Each sample is
// one draw, so a function's count is binomial in the profile's total; with
// several profiles a side, the spread of their shares also shows the
// run-to-run noise that sampling alone does not (load, caches, frequency).
func (t *shareTest) run() shareResult {
	var r shareResult
	cb, nb := sum(t.baseCount), sum(t.baseTotal)
	cn, nn := sum(t.newCount), sum(t.newTotal)
	r.base, r.new = float64(cb)/float64(nb), float64(cn)/float64(nn)
	r.delta = r.new - r.base
	p := float64(cb+cn) / float64(nb+nn)
	r.seBinom = math.Sqrt(max(t.dispersion, 1) * p * (1 - p) * (1/float64(nb) + 1/float64(nn)))
	kb, kn := len(t.baseCount), len(t.newCount)
	vb, vn := shareVariance(t.baseCount, t.baseTotal), shareVariance(t.newCount, t.newTotal)
	switch {
	case kb >= 2 && kn >= 2:
		// Welch's standard error: each side its own variance.
		r.seSpread = math.Sqrt(vb/float64(kb) + vn/float64(kn))
	case kb >= 2 || kn >= 2:
		// One side shows the spread: assume the other's is the same.
		v := max(vb, vn)
		r.seSpread = math.Sqrt(v * (1/float64(kb) + 1/float64(kn)))
	}
	return r
}

// bound returns the change in share a function must exceed to be beyond
// noise at one-sided level alpha: the normal quantile times the larger of
// the two standard errors. A t quantile for the spread's few degrees of
// freedom would make three recordings a side useless at a Bonferroni
// level; the binomial error is the floor that keeps a spread that happened
// to be small from passing noise.
func (r shareResult) bound(alpha float64) float64 {
	return normalQuantile(1-alpha) * max(r.seBinom, r.seSpread)
}

// detectable is the minimum detectable rise at level alpha: the true
// change that passes the bound with probability power, under the same
// standard error.
func (r shareResult) detectable(alpha float64) float64 {
	return (normalQuantile(1-alpha) + normalQuantile(power)) * max(r.seBinom, r.seSpread)
}

func sum(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

// shareVariance is the sample variance of count[i]/total[i] over the
// profiles with a total, 0 for fewer than two.
func shareVariance(count, total []int64) float64 {
	var shares []float64
	for i := range count {
		if total[i] > 0 {
			shares = append(shares, float64(count[i])/float64(total[i]))
		}
	}
	return variance(shares)
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

// normalTail is P(Z > z) for a standard normal Z.
func normalTail(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }
