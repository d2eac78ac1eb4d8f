package diff

import "math"

// totalResult compares the sides' totals: time where every profile has a
// sampling period, else samples.
type totalResult struct {
	base, new float64 // mean totals
	se        float64 // of the relative change
}

func (r *Report) compareTotal(base, nw []*Profile, failOn []Threshold) (totalResult, bool) {
	timed := true
	for _, p := range append(append([]*Profile(nil), base...), nw...) {
		timed = timed && p.Period > 0
	}
	vals := func(ps []*Profile) []float64 {
		v := make([]float64, len(ps))
		for i, p := range ps {
			v[i] = float64(p.Samples)
			if timed {
				v[i] *= float64(p.Period)
			}
		}
		return v
	}
	vb, vn := vals(base), vals(nw)
	res := totalResult{base: mean(vb), new: mean(vn)}
	if len(vb) >= 2 && len(vn) >= 2 {
		res.se = math.Sqrt(variance(vb)/float64(len(vb))+variance(vn)/float64(len(vn))) / res.base
	}
	// The sampling error of the counts is a floor either way: the log of
	// a ratio of Poisson counts has variance 1/a + 1/b.
	var cb, cn int64
	for _, p := range base {
		cb += p.Samples
	}
	for _, p := range nw {
		cn += p.Samples
	}
	res.se = max(res.se, math.Sqrt(1/float64(cb)+1/float64(cn))*(res.new/res.base))
	judged := false
	for _, t := range failOn {
		if t.Metric == Total && 100*(res.new/res.base-1) >= t.Value {
			judged = true
		}
	}
	return res, judged
}

func (t totalResult) change(alpha float64) Change {
	rel := 100 * (t.new/t.base - 1)
	q := normalQuantile(1 - alpha)
	c := Change{Base: 100, New: 100 * t.new / t.base, Delta: rel, Relative: &rel, Noise: 100 * q * t.se,
		MDE: 100 * (q + normalQuantile(power)) * t.se}
	if t.se > 0 {
		c.Z = (t.new/t.base - 1) / t.se
	}
	c.Significant = rel > 0 && rel >= c.Noise
	return c
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func variance(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := mean(v)
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return ss / float64(len(v)-1)
}
