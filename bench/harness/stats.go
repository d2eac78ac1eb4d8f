package main

// Statistics for the harness reports: quartiles, means and their
// confidence intervals.

import (
	"math"
	"sort"
)

// quartiles returns the first quartile, the median and the third quartile
// (linear interpolation between order statistics).
func quartiles(v []float64) (q1, med, q3 float64) {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	at := func(p float64) float64 {
		if len(s) == 0 {
			return 0
		}
		x := p * float64(len(s)-1)
		i := int(x)
		if i+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[i] + (x-float64(i))*(s[i+1]-s[i])
	}
	return at(0.25), at(0.5), at(0.75)
}

// meanCI returns the mean and the half-width of its 95% confidence interval
// (Student's t).
func meanCI(v []float64) (mean, half float64) {
	n := float64(len(v))
	if n < 2 {
		return 0, 0
	}
	for _, x := range v {
		mean += x
	}
	mean /= n
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / (n - 1))
	return mean, tQuantile975(len(v)-1) * sd / math.Sqrt(n)
}

// tQuantile975 is the 97.5th percentile of Student's t with df degrees of
// freedom (two-sided 95%).
func tQuantile975(df int) float64 {
	table := []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086}
	if df < len(table) {
		return table[df]
	}
	if df < 30 {
		return 2.05
	}
	return 1.96
}
