package diff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// fixedWork draws a profile of a fixed amount of work: each function's
// count its mean moved by a run factor (score's by 3%, the others', memory
// bound, by 15%, as bench/diffstat measured under load) and by counting's
// Poisson noise (normal here), and Go's preemption on top of score in 1%
// to 45% of its samples.
func fixedWork(rng *rand.Rand, means map[string]float64) *Profile {
	p := &Profile{Kind: "cpu", Period: 10_000_000}
	for _, name := range sortedKeysF(means) {
		spread := 0.15
		if name == "score" {
			spread = 0.03
		}
		lambda := means[name] * max(0.05, 1+spread*rng.NormFloat64())
		c := int64(math.Max(0, math.Round(lambda+math.Sqrt(lambda)*rng.NormFloat64())))
		frames := []Frame{{Name: "main"}, {Name: name}}
		if name == "score" {
			pre := int64(float64(c) * (0.01 + 0.44*rng.Float64()))
			p.Stacks = append(p.Stacks, Stack{Frames: []Frame{{Name: "main"}, {Name: "score"}, {Name: interruptFrame}}, Count: pre})
			c -= pre
		}
		p.Stacks = append(p.Stacks, Stack{Frames: frames, Count: c})
	}
	for _, s := range p.Stacks {
		p.Samples += s.Count
	}
	return p
}

// TestTimeFound: with a fixed amount of work, score made 30% slower is
// found by its own time (time:+10%) in at least 18 of 20 sets of five
// profiles a side, where its share, moved by the others' load-driven
// spread and by the preemption, is found in fewer; 100 same-build pairs
// at three and five a side do not alarm on time, though small functions'
// times move three times as much as score's; one a side, the time test
// stands on the prior alone and calls nothing.
func TestTimeFound(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 30))
	// As bench/diffstat's benchmark: score 57% of ~1,000 samples.
	means := map[string]float64{"score": 575, "parse": 150, "sortKeys": 80, "checksum": 80}
	for i := range 8 {
		means[fmt.Sprintf("small%d", i)] = 15
	}
	slow := slowed(means, "score", 1.3)
	th, err := ParseThresholds("flat:+1pp,cum:+1pp,time:+10%")
	if err != nil {
		t.Fatal(err)
	}
	sideOf := func(k int, m map[string]float64) []*Profile {
		ps := make([]*Profile, k)
		for i := range ps {
			ps[i] = fixedWork(rng, m)
			ps[i].Path = fmt.Sprintf("p%d", i)
		}
		return ps
	}
	byTime, byShare := 0, 0
	for range 20 {
		b, n := sideOf(5, means), sideOf(5, slow)
		r, err := Compare(b, n, Config{FailOn: th})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Functions {
			if f.Name == "score" && slices.Contains(f.Failed, "time:+10%") {
				byTime++
			}
		}
		if shares, _ := Compare(b, n, Config{}); slices.Contains(shares.Regressions, "score") {
			byShare++
		}
	}
	t.Logf("score 30%% slower, five a side: found by time in %d of 20 sets, by share in %d", byTime, byShare)
	if byTime < 18 || byShare >= byTime {
		t.Errorf("score 30%% slower: found by its time in %d of 20 sets (want 18 or more), by its share in %d (want fewer)", byTime, byShare)
	}
	for _, k := range []int{3, 5} {
		alarms := 0
		for range 100 {
			r, err := Compare(sideOf(k, means), sideOf(k, means), Config{FailOn: th})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Regressions) > 0 {
				alarms++
				t.Logf("%d a side: alarm %v", k, r.Regressions)
			}
		}
		if alarms > 0 {
			t.Errorf("%d a side: %d of 100 same-build pairs alarmed, want none", k, alarms)
		}
	}
	r, err := Compare(sideOf(1, means), sideOf(1, slow), Config{FailOn: th})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Functions {
		if f.Name == "score" && (f.Time == nil || f.Time.Significant || f.Time.MDE < 30) {
			t.Errorf("one a side: score's time %+v, want not significant, its mde above 30%%", f.Time)
		}
	}
}

// TestTimeThreshold: time takes a relative change only.
func TestTimeThreshold(t *testing.T) {
	if _, err := ParseThresholds("time:+5pp"); err == nil {
		t.Error("time:+5pp accepted")
	}
	if th, err := ParseThresholds("time:+10%"); err != nil || th[0].Metric != Time || th[0].Value != 10 {
		t.Errorf("time:+10%%: %v %v", th, err)
	}
}
