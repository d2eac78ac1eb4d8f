package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
)

// resampled compares n random sets of the pool at each size, where report
// compares disjoint ones: same-build pairs take 2k runs of one build drawn
// at random, split at random into two sides; slow-against-base sets draw k
// runs of each. When local, the 2k runs are consecutive ones (recorded
// close in time, as a CI job records base and head in turn) and the slow
// runs of a set are those recorded beside its base runs; otherwise they
// come from anywhere in the pool, as profiles of a base kept from an
// earlier job would. Sets share runs, so the comparisons are not
// independent: the report names the runs each false alarm used, and how
// many distinct runs the alarms share, so that one odd run is seen for
// what it is.
func resampled(w io.Writer, base, slow []run, sizes []int, methods []method, n int, seed uint64, local bool) error {
	rng := rand.New(rand.NewPCG(seed, 30))
	where := "anywhere in the pool"
	if local {
		where = "consecutive runs"
	}
	fmt.Fprintf(w, "resampled: %d random sets at each size of %s (seed %d); sets share runs\n", n, where, seed)
	for _, m := range methods {
		fmt.Fprintf(w, "method: %s\n", m.name)
		fmt.Fprintf(w, "%-7s %-28s %-22s %-13s %-24s\n", "a side", "false alarms (same build)", "score found (30% slower)", "score mde", "benchstat ns/op (p<0.05)")
		for _, k := range sizes {
			alarms := 0
			byRun := map[string]int{}
			for i := range n {
				rs := base
				if i%2 == 1 {
					rs = slow
				}
				if len(rs) < 2*k {
					continue
				}
				pick := draw(rng, rs, 2*k)
				a, b := pick[:k], pick[k:]
				if local {
					// Runs 2j and 2j+1 of the window go one to each side,
					// which is which at random: base and head in turn.
					at := rng.IntN(len(rs) - 2*k + 1)
					a, b = nil, nil
					for j := range k {
						x, y := rs[at+2*j], rs[at+2*j+1]
						if rng.IntN(2) == 1 {
							x, y = y, x
						}
						a, b = append(a, x), append(b, y)
					}
				}
				r, err := m.compare(a, b)
				if err != nil {
					return err
				}
				if len(r.Regressions) > 0 {
					alarms++
					for _, p := range append(r.Base.Profiles, r.New.Profiles...) {
						byRun[p]++
					}
					f := r.Functions[0]
					fmt.Fprintf(w, "        alarm: %s vs %s: %s flat %+.2fpp (noise %.2f), cum %+.2fpp (noise %.2f), dispersion %.2f (%d df)\n",
						r.Base.Profiles, r.New.Profiles, f.Name, f.Flat.Delta, f.Flat.Noise, f.Cum.Delta, f.Cum.Noise, r.Dispersion, r.DispersionDF)
				}
			}
			found, bsFound := 0, 0
			var mdes, tmdes []float64
			for range n {
				if len(base) < k || len(slow) < k {
					break
				}
				a, b := draw(rng, base, k), draw(rng, slow, k)
				if local {
					at := rng.IntN(min(len(base), len(slow)) - k + 1)
					a, b = base[at:at+k], slow[at:at+k]
				}
				r, err := m.compare(a, b)
				if err != nil {
					return err
				}
				tallyTarget(r, target, &found, &mdes, &tmdes)
				if p := mannWhitneyP(ns(a), ns(b)); p < 0.05 && median(ns(b)) > median(ns(a)) {
					bsFound++
				}
			}
			fmt.Fprintf(w, "%-7d %-28s %-22s %-13s %-24s\n", k,
				fmt.Sprintf("%d/%d (%.2f%%)", alarms, n, pct(alarms, n)),
				fmt.Sprintf("%d/%d (%.0f%%)", found, n, pct(found, n)),
				mdeText(mdes, tmdes),
				fmt.Sprintf("%d/%d (%.0f%%)", bsFound, n, pct(bsFound, n)))
			if alarms > 0 {
				fmt.Fprintf(w, "        runs in the alarms: %s\n", mostUsed(byRun, alarms))
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}

// draw picks k distinct runs of rs at random, in random order.
func draw(rng *rand.Rand, rs []run, k int) []run {
	idx := rng.Perm(len(rs))[:k]
	out := make([]run, k)
	for i, j := range idx {
		out[i] = rs[j]
	}
	return out
}

// mostUsed lists the runs that took part in the most alarms, with counts.
func mostUsed(byRun map[string]int, alarms int) string {
	type rc struct {
		name string
		n    int
	}
	var v []rc
	for name, n := range byRun {
		v = append(v, rc{name, n})
	}
	sort.Slice(v, func(i, j int) bool { return v[i].n > v[j].n || v[i].n == v[j].n && v[i].name < v[j].name })
	s := fmt.Sprintf("%d distinct;", len(v))
	for i := 0; i < len(v) && i < 5; i++ {
		s += fmt.Sprintf(" %s in %d of %d", v[i].name, v[i].n, alarms)
	}
	return s
}
