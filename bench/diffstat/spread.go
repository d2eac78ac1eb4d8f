package main

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/macprof/macprof/diff"
)

// spread writes, for each build and each function above 1% of the judged
// samples, how much its flat share varied from run to run: the variance
// over the binomial one (its dispersion) and the relative spread beyond
// sampling (the standard deviation of its share not explained by the
// binomial, over the share). A dispersion that grows with the share, with
// a relative spread about constant, is run-to-run noise proportional to
// the function's time rather than to the number of samples.
func spread(w io.Writer, builds map[string][]run) error {
	for _, name := range []string{"base", "slow"} {
		rs := builds[name]
		if len(rs) < 3 {
			continue
		}
		shares := map[string][]float64{}
		var totals []float64
		for _, r := range rs {
			c, err := diff.Compare([]*diff.Profile{r.prof}, []*diff.Profile{r.prof}, diff.Config{Top: -1})
			if err != nil {
				return err
			}
			// The judged total: score's count over its share is not known
			// here, so the samples less those set apart.
			apart := 0.0
			for _, a := range c.LoadFollowing {
				apart += a.Base
			}
			totals = append(totals, float64(r.prof.Samples)*(1-apart/100))
			for _, f := range c.Functions {
				shares[f.Name] = append(shares[f.Name], f.Flat.Base/100)
			}
		}
		n := mean(totals)
		fmt.Fprintf(w, "%s: %d runs, %.0f judged samples a run on average\n", name, len(rs), n)
		fmt.Fprintf(w, "  %-40s %8s %8s %8s %10s %10s %10s\n", "function", "share", "sd", "binom sd", "dispersion", "rel spread", "logit sd")
		type row struct {
			name           string
			p, sd, bsd, cv float64
		}
		var rows []row
		for f, v := range shares {
			for len(v) < len(rs) {
				v = append(v, 0)
			}
			p := mean(v)
			if p < 0.01 {
				continue
			}
			sd := math.Sqrt(sampleVar(v))
			bsd := math.Sqrt(p * (1 - p) / n)
			cv := math.Sqrt(max(0, sd*sd-bsd*bsd)) / p
			rows = append(rows, row{f, p, sd, bsd, cv})
		}
		slices.SortFunc(rows, func(a, b row) int { return -cmpFloat(a.p, b.p) })
		for _, r := range rows {
			fmt.Fprintf(w, "  %-40s %7.2f%% %7.2fpp %7.2fpp %10.2f %9.1f%% %9.1f%%\n", r.name, 100*r.p, 100*r.sd, 100*r.bsd, r.sd*r.sd/(r.bsd*r.bsd), 100*r.cv, 100*r.cv/(1-r.p))
		}
	}
	return nil
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func sampleVar(v []float64) float64 {
	m := mean(v)
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return s / float64(len(v)-1)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
