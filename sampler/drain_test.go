package sampler

import (
	"testing"
	"time"
)

// drainingTarget is a fakeTarget whose kernel samples each thread once per
// period of its CPU time (SampleDrainer). A thread's samples start at its
// first Capture, as a backend's ring opens there; each sample's stack ends
// in its sequence number (mod 97), so that counts per stack show whether
// each drained sample was counted once.
type drainingTarget struct {
	*fakeTarget
	period  time.Duration
	refused bool               // KernelSampled reports a thread that had to be stopped
	keep    int                // with lose: of every lose samples only the first keep reach the ring
	lose    int                //
	taken   map[ThreadID]int64 // samples the kernel took so far
	drained map[ThreadID]int64 // samples handed out so far
	started map[ThreadID]time.Duration
	drains  int
}

func newDraining(pid int, period time.Duration, threads map[ThreadID]*fakeThread) *drainingTarget {
	return &drainingTarget{fakeTarget: newFake(pid, threads), period: period,
		taken: map[ThreadID]int64{}, drained: map[ThreadID]int64{}, started: map[ThreadID]time.Duration{}}
}

func (d *drainingTarget) cpu(t ThreadID) time.Duration {
	return time.Duration(float64(time.Since(d.start)) * d.threads[t].share)
}

func (d *drainingTarget) KernelSampled() (bool, bool) { return true, !d.refused }

func (d *drainingTarget) Capture(t ThreadID, c *Capture) error {
	if _, ok := d.started[t]; !ok {
		d.started[t] = d.cpu(t)
	}
	return d.fakeTarget.Capture(t, c)
}

func (d *drainingTarget) DrainSamples(t ThreadID, caps []*Capture) (int, error) {
	d.drains++
	start, ok := d.started[t]
	if !ok {
		return 0, ErrNotKernelSampled
	}
	total := int64((d.cpu(t) - start) / d.period)
	n := 0
	for d.drained[t] < total && n < len(caps) {
		seq := d.drained[t]
		d.drained[t]++
		if d.lose > 0 && int(seq)%d.lose >= d.keep {
			continue // dropped: the ring was full
		}
		c := caps[n]
		c.Thread, c.Stopped = t, 0
		c.PCs = append(append(c.PCs[:0], d.threads[t].stack...), 0x5000+uint64(seq%97))
		n++
	}
	return n, nil
}

func TestDrainCountsEveryKernelSampleAndWakesLessOften(t *testing.T) {
	const hz = 100
	d := newDraining(10, time.Second/hz, map[ThreadID]*fakeThread{
		1: {share: 1, stack: []uint64{1, 2, 3}},
		2: {share: 0.5, stack: []uint64{4, 5}},
		3: {share: 0, stack: []uint64{6}},
	})
	ws := run(t, Config{Hz: hz}, 1200*time.Millisecond, d)
	w := ws[0]
	c := countBy(w)
	// About 120 and 60 samples: the first tick a thread ran captures it
	// once (a stop, counting its CPU time so far), then every sample the
	// kernel took is counted.
	if c[1] < 105 || c[1] > 121 {
		t.Errorf("busy thread: %d samples, want about 120", c[1])
	}
	if c[2] < 50 || c[2] > 61 {
		t.Errorf("half-busy thread: %d samples, want about 60", c[2])
	}
	if c[3] != 0 || d.captures[3] != 0 {
		t.Errorf("idle thread: %d samples, %d captures; want none", c[3], d.captures[3])
	}
	if d.captures[1] != 1 || d.captures[2] != 1 {
		t.Errorf("threads captured %d and %d times, want once each (to start their samples)", d.captures[1], d.captures[2])
	}
	// Each drained sample counted once, on its own stack.
	perStack := map[uint64]int64{}
	for _, s := range w.Samples {
		if s.Thread == 1 {
			pcs := w.Stacks[s.Stack].PCs
			perStack[pcs[len(pcs)-1]] += s.Count
		}
	}
	if len(perStack) < 90 {
		t.Errorf("busy thread's samples fell on %d stacks, want nearly one per sample (97 distinct)", len(perStack))
	}
	// Woken every DrainInterval (100 ms at 100 Hz), not every period.
	if st := w.Stats; st.Ticks < 8 || st.Ticks > 14 {
		t.Errorf("%d ticks in 1.2 s, want about 12 (one per drain interval)", st.Ticks)
	}
}

func TestDrainCountsCPUTimeTheKernelDidNotSampleOnTheLastStack(t *testing.T) {
	const hz = 100
	d := newDraining(10, time.Second/hz, map[ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1, 2}}})
	d.keep, d.lose = 1, 3 // two of every three samples lost
	ws := run(t, Config{Hz: hz}, time.Second, d)
	c := countBy(ws[0])[1]
	if c < 85 || c > 101 {
		t.Errorf("%d samples for a second of CPU at 100 Hz with samples lost, want about 100", c)
	}
	if got, want := d.drained[1], c; got < want*8/10 {
		t.Errorf("%d samples taken, %d counted", got, want)
	}
}

func TestDrainTicksEveryPeriodWhenAThreadIsStoppedForItsSamples(t *testing.T) {
	const hz = 100
	d := newDraining(10, time.Second/hz, map[ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1}}})
	d.refused = true
	ws := run(t, Config{Hz: hz}, 500*time.Millisecond, d)
	if st := ws[0].Stats; st.Ticks < 40 {
		t.Errorf("%d ticks in 500 ms at 100 Hz with a thread refused kernel samples, want one per period", st.Ticks)
	}
}

func TestDrainTakesTheLastSamplesOfATargetThatExits(t *testing.T) {
	const hz = 100
	d := newDraining(10, time.Second/hz, map[ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1}}})
	d.exitAt = time.Now().Add(550 * time.Millisecond)
	ws := run(t, Config{Hz: hz}, 5*time.Second, d)
	// Ticks at about 100 ms (first sight), 200 ms (the capture that starts
	// its samples), 300-500 ms (drains), 600 ms (the exit found): the
	// samples since the 500 ms drain are drained at the exit too, 40 in
	// all rather than 30. (The fake's clock runs on past its exit.)
	c := countBy(ws[0])[1]
	if d.drained[1] < 38 || c < 45 {
		t.Errorf("%d samples drained, %d counted; want about 40 drained (the last ones at the exit), 50 counted", d.drained[1], c)
	}
}

func TestDrainDoesNotAllocate(t *testing.T) {
	const hz = 1000
	d := newDraining(10, time.Second/hz, map[ThreadID]*fakeThread{
		1: {share: 1, stack: []uint64{1, 2, 3}}, 2: {share: 1, stack: []uint64{4, 5}},
	})
	s, err := New(Config{Hz: hz})
	if err != nil {
		t.Fatal(err)
	}
	s.Add(d)
	s.adopt()
	s.win = s.newWindow(time.Now())
	tick := int64(0)
	for i := 0; i < 300; i++ { // warm up: every stack interned, every map entry made
		tick++
		d.start = d.start.Add(-2 * time.Millisecond)
		s.tick(tick)
	}
	allocs := testing.AllocsPerRun(50, func() {
		tick++
		d.start = d.start.Add(-2 * time.Millisecond) // 2 samples per tick
		s.tick(tick)
	})
	if allocs != 0 {
		t.Fatalf("a draining tick allocates %.1f times", allocs)
	}
	if d.drains == 0 || d.drained[1] < 500 {
		t.Fatalf("%d drains, %d samples drained: the test did not drain", d.drains, d.drained[1])
	}
}
