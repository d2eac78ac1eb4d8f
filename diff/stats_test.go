package diff

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// workShares is a benchmark's profile as bench/diffstat's package gives
// one: three functions under main, score a third of the time.
var workShares = map[string]float64{"parse": 1.0 / 3, "sortKeys": 1.0 / 6, "checksum": 1.0 / 6, "score": 1.0 / 3}

// simulated draws a profile of n samples: each function's weight moved by
// a run-to-run factor of spread (relative standard deviation, as caches
// and clocks move real runs), and beside them runtime.asyncPreempt, under
// score as Go's preemption lands in a loop, at a share anywhere from 1% to
// 25%, as machine load moved it in bench/diffstat's runs.
func simulated(rng *rand.Rand, n int, shares map[string]float64, spread float64) *Profile {
	names := sortedKeysF(shares)
	w := make([]float64, len(names))
	var total float64
	for i, name := range names {
		w[i] = shares[name] * (1 + spread*rng.NormFloat64())
		total += w[i]
	}
	preempt := 0.01 + 0.24*rng.Float64()
	counts := make(map[string]int64)
	for range n {
		if rng.Float64() < preempt {
			counts["runtime.asyncPreempt"]++
			continue
		}
		x := rng.Float64() * total
		for i, name := range names {
			if x < w[i] || i == len(names)-1 {
				counts[name]++
				break
			}
			x -= w[i]
		}
	}
	p := &Profile{Kind: "cpu", Period: 10_000_000}
	for _, name := range sortedKeys(counts) {
		frames := []Frame{{Name: "main"}, {Name: name}}
		if name == "runtime.asyncPreempt" {
			frames = []Frame{{Name: "main"}, {Name: "score"}, {Name: name}}
		}
		p.Stacks = append(p.Stacks, Stack{Frames: frames, Count: counts[name]})
		p.Samples += counts[name]
	}
	return p
}

func sortedKeysF(m map[string]float64) []string {
	k := make(map[string]int64, len(m))
	for s := range m {
		k[s] = 0
	}
	return sortedKeys(k)
}

// slowed is shares with name's weight raised by factor: that function
// made slower in its own code.
func slowed(shares map[string]float64, name string, factor float64) map[string]float64 {
	out := make(map[string]float64, len(shares))
	for k, v := range shares {
		out[k] = v
	}
	out[name] *= factor
	return out
}

func side(rng *rand.Rand, k, n int, shares map[string]float64) []*Profile {
	ps := make([]*Profile, k)
	for i := range ps {
		ps[i] = simulated(rng, n, shares, 0.02)
		ps[i].Path = fmt.Sprintf("p%d", i)
	}
	return ps
}

// TestSameBuildNoAlarm: 100 seeded pairs of the same build at one, three
// and five profiles a side do not alarm, though runtime.asyncPreempt's
// share moves by up to 24 points between profiles; it is listed apart.
func TestSameBuildNoAlarm(t *testing.T) {
	for _, k := range []int{1, 3, 5} {
		t.Run(fmt.Sprintf("%d a side", k), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(k), 30))
			alarms, apart := 0, 0
			for range 100 {
				// One a side at dispersion 1 (sampling alone), so that
				// setting the preemption apart is what keeps the pairs
				// quiet; several a side as a user runs it.
				cfg := Config{}
				if k == 1 {
					cfg.Dispersion, cfg.RunSpread = 1, -1
				}
				r, err := Compare(side(rng, k, 1000, workShares), side(rng, k, 1000, workShares), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Regressions) > 0 {
					alarms++
					t.Logf("alarm: %v", r.Regressions)
				}
				if len(r.LoadFollowing) == 1 && r.LoadFollowing[0].Name == "runtime.asyncPreempt" {
					apart++
				}
				for _, f := range r.Functions {
					if f.Name == "runtime.asyncPreempt" {
						t.Fatalf("runtime.asyncPreempt judged: %+v", f)
					}
				}
			}
			if alarms > 0 || apart != 100 {
				t.Errorf("%d of 100 same-build pairs alarmed, want none; asyncPreempt set apart in %d", alarms, apart)
			}
		})
	}
}

// TestLoadFollowingJudgedWhenAsked: with NoLoadFollowing, the same pairs'
// preemption swings do fail under sampling alone, which is why they are
// set apart by default.
func TestLoadFollowingJudgedWhenAsked(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 30))
	alarms := 0
	for range 20 {
		r, err := Compare(side(rng, 1, 1000, workShares), side(rng, 1, 1000, workShares), Config{LoadFollowing: NoLoadFollowing(), Dispersion: 1, RunSpread: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Regressions) > 0 {
			alarms++
		}
	}
	if alarms < 5 {
		t.Errorf("%d of 20 pairs alarmed with asyncPreempt judged; the test's swings should fail several", alarms)
	}
}

// TestSlowdownFound: score made 30% slower (a third of the time, +6.1
// points) is found first in at least 16 of 20 seeded sets of five
// profiles of 2,000 samples a side (20 s of CPU at Go's 100 Hz, 2 s at
// macprof's 999), and no other function is ever named: with runs that
// move little, the prior run spread (combined with five profiles' spread)
// leaves the change about at the minimum detectable one; with one profile
// a side the report says a change that small could not be found reliably.
func TestSlowdownFound(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 30))
	slow := slowed(workShares, "score", 1.3)
	var mdes []float64
	found := 0
	for i := range 20 {
		r, err := Compare(side(rng, 5, 2000, workShares), side(rng, 5, 2000, slow), Config{})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Regressions) > 1 || len(r.Regressions) == 1 && r.Regressions[0] != "score" {
			t.Errorf("set %d: regressions %v, want score alone", i, r.Regressions)
		}
		for _, f := range r.Functions {
			if f.Name != "score" {
				continue
			}
			if f.Flat.MDE <= f.Flat.Noise {
				t.Errorf("set %d: score's flat minimum detectable change %.2fpp, not above its noise bound %.2f", i, f.Flat.MDE, f.Flat.Noise)
			}
			mdes = append(mdes, f.Flat.MDE)
		}
		if len(r.Regressions) == 1 {
			found++
		}
	}
	slices.Sort(mdes)
	if m := mdes[len(mdes)/2]; found < 16 || m < 5 || m > 7 {
		t.Errorf("score found in %d of 20 sets, want 16 or more; median minimum detectable change %.2fpp, want 5-7 (all: %.2f)", found, m, mdes)
	}
	r, err := Compare(side(rng, 1, 2000, workShares), side(rng, 1, 2000, slow), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Functions {
		if f.Name == "score" && f.Flat.MDE < 6.1 {
			t.Errorf("one a side: score's minimum detectable change %.2fpp, want above 6.1: one profile a side's noise, with the assumed dispersion, is wider", f.Flat.MDE)
		}
	}
}

// TestReportShowsApartAndMDE: the text and markdown reports list the
// set-apart functions and a minimum detectable change per function.
func TestReportShowsApartAndMDE(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 30))
	r, err := Compare(side(rng, 3, 1000, workShares), side(rng, 3, 1000, workShares), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{Text, Markdown} {
		var b bytes.Buffer
		if err := r.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		if !strings.Contains(s, "Set apart, as their share follows the machine's load") || !strings.Contains(s, "asyncPreempt") ||
			!strings.Contains(s, "mde") {
			t.Errorf("%s report without the set-apart line or the mde column:\n%s", f, s)
		}
	}
}

// TestDispersion: the spread of shares between profiles is measured as
// one factor over every function and combined with the prior: near 1 for
// profiles that differ by sampling alone, several where each run moves the
// shares; one profile a side takes the prior, which widens the noise bound
// by its square root.
func TestDispersion(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 30))
	measure := func(spread float64) float64 {
		var ps []*Profile
		for range 20 {
			ps = append(ps, simulated(rng, 2000, workShares, spread))
		}
		r, err := Compare(ps[:10], ps[10:], Config{})
		if err != nil {
			t.Fatal(err)
		}
		if r.DispersionDF != 2*9*3 {
			t.Errorf("degrees of freedom %d, want 54 (10 profiles a side, 4 functions)", r.DispersionDF)
		}
		return r.Dispersion
	}
	// With the prior's 20 degrees of freedom beside 54 measured: about
	// (2.5*20 + 54)/74 = 1.4 for sampling alone.
	if d := measure(0); d > 1.8 {
		t.Errorf("dispersion of sampling alone: %.2f, want about 1.4", d)
	}
	if d := measure(0.15); d < 3 {
		t.Errorf("dispersion with shares moving 15%% a run: %.2f, want several", d)
	}
	if d := measure(0); d < 1.2 {
		t.Errorf("dispersion of sampling alone: %.2f, want the prior to hold it above 1.2", d)
	}
	p := []*Profile{simulated(rng, 2000, workShares, 0)}
	one, _ := Compare(p, p, Config{RunSpread: -1})
	binom, _ := Compare(p, p, Config{Dispersion: 1, RunSpread: -1})
	if one.Dispersion != DefaultDispersion || one.DispersionDF != 0 {
		t.Errorf("one a side: dispersion %.2f (%d df), want the prior %.2f", one.Dispersion, one.DispersionDF, DefaultDispersion)
	}
	if a, b := one.Functions[0].Flat.Noise, binom.Functions[0].Flat.Noise; math.Abs(a/b-math.Sqrt(DefaultDispersion)) > 1e-9 {
		t.Errorf("noise %.3f with the prior, %.3f without: ratio %.3f, want √%.1f", a, b, a/b, DefaultDispersion)
	}
}

// manyShares is a benchmark's profile as bench/diffstat measured it: its
// main loop half the time, the rest spread over twenty small functions.
var manyShares = func() map[string]float64 {
	m := map[string]float64{"score": 0.5}
	for i := range 20 {
		m[fmt.Sprintf("f%02d", i)] = 0.025
	}
	return m
}()

// TestRunSpread: when each run moves the functions' weights (12%, as load
// moved bench/diffstat's benchmark), the run spread is measured from
// three profiles a side and keeps same-build pairs quiet, where the
// dispersion alone, ruled by the many small functions whose shares move
// little beyond sampling, alarmed on several; the spread is near zero for
// profiles that differ by sampling alone, and near the truth from twenty.
func TestRunSpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 30))
	sideSpread := func(k int, spread float64) []*Profile {
		ps := make([]*Profile, k)
		for i := range ps {
			ps[i] = simulated(rng, 1000, manyShares, spread)
			ps[i].Path = fmt.Sprintf("p%d", i)
		}
		return ps
	}
	alarms := map[float64]int{}
	for range 200 {
		a, b := sideSpread(3, 0.12), sideSpread(3, 0.12)
		for _, prior := range []float64{0, -1} {
			r, err := Compare(a, b, Config{RunSpread: prior})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Regressions) > 0 {
				alarms[prior]++
			}
		}
	}
	if alarms[0] > 1 {
		t.Errorf("three a side, weights moving 12%% a run: %d of 200 same-build pairs alarmed, want at most 1", alarms[0])
	}
	if alarms[-1] < 4 {
		t.Errorf("with the dispersion alone (--run-spread -1): %d of 200 alarmed; the test's spread should fail several", alarms[-1])
	}
	t.Logf("alarms of 200: %d with the run spread, %d without", alarms[0], alarms[-1])

	measure := func(spread float64) *Report {
		var ps []*Profile
		for range 20 {
			ps = append(ps, simulated(rng, 2000, workShares, spread))
		}
		r, err := Compare(ps[:10], ps[10:], Config{RunSpread: -1e-9})
		if err != nil {
			t.Fatal(err)
		}
		if r.RunSpreadDF != 18 {
			t.Errorf("run spread's degrees of freedom %d, want 18", r.RunSpreadDF)
		}
		return r
	}
	if s := measure(0).RunSpread; s > 0.06 {
		t.Errorf("run spread of sampling alone: %.3f, want about 0", s)
	}
	// A 15% move of each weight moves score's log-odds (a third of the
	// time) by about 15% x √(1 + 1/2·(1/4+1/4+1/4·4)/... ): 0.12 to 0.25.
	if s := measure(0.15).RunSpread; s < 0.12 || s > 0.25 {
		t.Errorf("run spread with weights moving 15%% a run: %.3f, want 0.12-0.25", s)
	}
	p := []*Profile{simulated(rng, 2000, workShares, 0)}
	one, _ := Compare(p, p, Config{})
	if one.RunSpread != DefaultRunSpread || one.RunSpreadDF != 0 {
		t.Errorf("one a side: run spread %.3f (%d df), want the prior %.3f", one.RunSpread, one.RunSpreadDF, DefaultRunSpread)
	}
}

// TestTQuantile: Student's t quantiles against published tables, and the
// normal one for very many degrees of freedom.
func TestTQuantile(t *testing.T) {
	for _, c := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.7062}, {0.975, 4, 2.7764}, {0.995, 10, 3.1693},
		{0.9995, 8, 5.0413}, {0.95, 30, 1.6973}, {0.025, 4, -2.7764}, {0.999, 1e7, 3.0902},
	} {
		if got := tQuantile(c.p, c.df); math.Abs(got-c.want) > 1e-4 {
			t.Errorf("tQuantile(%g, %g) = %.5f, want %.4f", c.p, c.df, got, c.want)
		}
	}
}
