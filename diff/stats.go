package diff

import "math"

// shareTest is what the comparison knows about one function's share (flat
// or cumulative) on both sides: per profile, its count and the total.
type shareTest struct {
	baseCount, baseTotal []int64
	newCount, newTotal   []int64
}

// shareResult is the outcome of a shareTest: pooled shares, the change, the
// standard errors of the change and the bound a change must pass.
type shareResult struct {
	base, new float64 // pooled shares, 0..1
	delta     float64 // new - base
	seBinom   float64 // sampling error of a count (two-proportion)
	seSpread  float64 // from the spread of the per-profile shares, 0 without
	df        float64 // degrees of freedom of seSpread
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
	r.seBinom = math.Sqrt(p * (1 - p) * (1/float64(nb) + 1/float64(nn)))
	kb, kn := len(t.baseCount), len(t.newCount)
	vb, vn := shareVariance(t.baseCount, t.baseTotal), shareVariance(t.newCount, t.newTotal)
	switch {
	case kb >= 2 && kn >= 2:
		// Welch: each side its own variance, Welch–Satterthwaite df.
		a, b := vb/float64(kb), vn/float64(kn)
		r.seSpread = math.Sqrt(a + b)
		if a+b > 0 {
			r.df = (a + b) * (a + b) / (a*a/float64(kb-1) + b*b/float64(kn-1))
		}
	case kb >= 2 || kn >= 2:
		// One side shows the spread: assume the other's is the same.
		v, k := vb, kb
		if kn >= 2 {
			v, k = vn, kn
		}
		r.seSpread = math.Sqrt(v * (1/float64(kb) + 1/float64(kn)))
		r.df = float64(k - 1)
	}
	return r
}

// bound returns the change in share a function must exceed to be beyond
// noise at one-sided level alpha: both the binomial test and, where there
// is a spread, Welch's t-test must reject.
func (r shareResult) bound(alpha float64) float64 {
	b := normalQuantile(1-alpha) * r.seBinom
	if r.seSpread > 0 && r.df > 0 {
		b = max(b, tQuantile(1-alpha, r.df)*r.seSpread)
	}
	return b
}

func sum(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

// shareVariance is the sample variance of count[i]/total[i], 0 for fewer
// than two profiles.
func shareVariance(count, total []int64) float64 {
	k := len(count)
	if k < 2 {
		return 0
	}
	var mean float64
	for i := range count {
		mean += float64(count[i]) / float64(total[i])
	}
	mean /= float64(k)
	var ss float64
	for i := range count {
		d := float64(count[i])/float64(total[i]) - mean
		ss += d * d
	}
	return ss / float64(k-1)
}

// normalQuantile is the inverse of the standard normal distribution
// function.
func normalQuantile(p float64) float64 {
	return -math.Sqrt2 * math.Erfcinv(2*p)
}

// normalTail is P(Z > z) for a standard normal Z.
func normalTail(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// tQuantile is the inverse of Student's t distribution function with df
// degrees of freedom (df may be fractional, as Welch's is), found by
// bisection on the tail.
func tQuantile(p, df float64) float64 {
	if p <= 0.5 {
		return 0
	}
	tail := 1 - p
	lo, hi := 0.0, 1.0
	for tTail(hi, df) > tail && hi < 1e12 {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if tTail(mid, df) > tail {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-10*hi {
			break
		}
	}
	return hi
}

// tTail is P(T > t) for t >= 0: half the regularized incomplete beta
// function I_x(df/2, 1/2) at x = df/(df+t²).
func tTail(t, df float64) float64 {
	return 0.5 * incBeta(df/2, 0.5, df/(df+t*t))
}

// incBeta is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (Lentz's method), using the symmetry
// I_x(a,b) = 1 - I_{1-x}(b,a) where the fraction converges slowly.
func incBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaFraction(b, a, 1-x)/b
	}
	return front * betaFraction(a, b, x) / a
}

func betaFraction(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		for _, num := range [2]float64{
			fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)),
			-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)),
		} {
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
