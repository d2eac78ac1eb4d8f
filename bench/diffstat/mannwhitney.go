package main

// mannWhitneyP is the two-sided p-value of the Mann-Whitney U test of a
// against b, exact (ties averaged): the test benchstat applies to ns/op,
// written out here so that the bench needs no download.
func mannWhitneyP(a, b []float64) float64 {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return 1
	}
	// U counts the pairs where a's value is below b's, ties a half; in
	// halves to stay integral.
	u2 := 0
	for _, x := range a {
		for _, y := range b {
			switch {
			case x < y:
				u2 += 2
			case x == y:
				u2++
			}
		}
	}
	// dist[k] counts the arrangements of n values among n+m ranks whose U
	// is k (no ties), by the recurrence over the largest rank.
	dist := uDist(n, m)
	var total, tail float64
	lo, hi := min(u2, 2*n*m-u2), max(u2, 2*n*m-u2)
	for k, c := range dist {
		total += c
		if 2*k <= lo || 2*k >= hi {
			tail += c
		}
	}
	return min(1, tail/total)
}

// uDist is the null distribution of U for samples of n and m, as counts.
func uDist(n, m int) []float64 {
	// f[i][j][k]: arrangements of i and j values with U = k.
	f := make([][][]float64, n+1)
	for i := range f {
		f[i] = make([][]float64, m+1)
		for j := range f[i] {
			f[i][j] = make([]float64, i*j+1)
			switch {
			case i == 0 || j == 0:
				f[i][j][0] = 1
			default:
				// The largest value is an a (U unchanged: it is below no
				// b) or a b (every a is below it: U rises by i).
				for k := range f[i][j] {
					if k < len(f[i-1][j]) {
						f[i][j][k] += f[i-1][j][k]
					}
					if k >= i && k-i < len(f[i][j-1]) {
						f[i][j][k] += f[i][j-1][k-i]
					}
				}
			}
		}
	}
	return f[n][m]
}
