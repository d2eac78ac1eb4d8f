package sampler

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

// slowDrain is a drainingTarget whose rings hold an hour of samples.
type slowDrain struct{ *drainingTarget }

func (slowDrain) DrainInterval() time.Duration { return time.Hour }

// TestSettledCapsTheDrainInterval: with Config.Settled set, drains come as
// seldom as the target allows only while it reports that nothing was
// created since it was last asked; otherwise every listEvery. Without it,
// as the target allows.
func TestSettledCapsTheDrainInterval(t *testing.T) {
	d := slowDrain{newDraining(1, 50*time.Millisecond, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}}})}
	settled := false
	asked := 0
	for _, tc := range []struct {
		fn   func() bool
		want time.Duration
	}{
		{nil, time.Hour},
		{func() bool { asked++; return settled }, listEvery},
	} {
		s, err := New(Config{Hz: 20, Settled: tc.fn})
		if err != nil {
			t.Fatal(err)
		}
		s.win = s.newWindow(time.Now())
		s.targets = append(s.targets, &targetState{t: d, drainer: d, ticks: 3})
		if got := s.drains.interval(s.targets, s.win.start); got != tc.want {
			t.Errorf("Settled %v: interval %v, want %v", tc.fn != nil, got, tc.want)
		}
		if tc.fn != nil {
			settled = true
			if got := s.drains.interval(s.targets, s.win.start); got != time.Hour {
				t.Errorf("settled: interval %v, want an hour", got)
			}
			if asked != 2 {
				t.Errorf("Settled asked %d times for two intervals", asked)
			}
		}
	}
}

// TestUnchangedThreadsKeepTheDrainInterval: while every target's backend
// tells that none of its threads started, ended or changed, the drain
// interval is the targets' own without asking Config.Settled (the system's
// other processes are none of the recording's); once one tells otherwise,
// Settled decides as without a watcher.
func TestUnchangedThreadsKeepTheDrainInterval(t *testing.T) {
	d := slowDrain{newDraining(1, 50*time.Millisecond, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}}})}
	w := &watchingTarget{drainingTarget: d.drainingTarget, unchanged: true}
	asked := 0
	s, err := New(Config{Hz: 20, Settled: func() bool { asked++; return false }})
	if err != nil {
		t.Fatal(err)
	}
	s.win = s.newWindow(time.Now())
	s.targets = append(s.targets, &targetState{t: d, drainer: d, watcher: w, ticks: 3})
	if got := s.drains.interval(s.targets, s.win.start); got != time.Hour || asked != 0 {
		t.Errorf("threads unchanged: interval %v, Settled asked %d times; want an hour, never", got, asked)
	}
	w.unchanged = false
	if got := s.drains.interval(s.targets, s.win.start); got != listEvery || asked != 1 {
		t.Errorf("threads changed: interval %v, Settled asked %d times; want %v, once", got, asked, listEvery)
	}
}

// nearListDrain is a drainingTarget whose buffers hold a hundred periods
// at 999 Hz: a drain interval a tenth of a millisecond past listEvery.
type nearListDrain struct{ *drainingTarget }

func (nearListDrain) DrainInterval() time.Duration { return 100 * (time.Second / 999) }

// TestSettledIsNotAskedNearListEvery: a drain interval within listSlop of
// listEvery is kept without asking Config.Settled, which could make it no
// shorter worth the read.
func TestSettledIsNotAskedNearListEvery(t *testing.T) {
	d := nearListDrain{newDraining(1, time.Second/999, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}}})}
	asked := 0
	s, err := New(Config{Hz: 999, Settled: func() bool { asked++; return false }})
	if err != nil {
		t.Fatal(err)
	}
	s.win = s.newWindow(time.Now())
	s.targets = append(s.targets, &targetState{t: d, drainer: d, ticks: 3})
	want := d.DrainInterval()
	for range 3 {
		if got := s.drains.interval(s.targets, s.win.start); got != want {
			t.Errorf("interval %v, want %v", got, want)
		}
	}
	if asked != 0 {
		t.Errorf("Settled asked %d times for three intervals of %v, want none", asked, want)
	}
}

// runSlowDrain runs a sampler over a slowDrain target until the test ends
// and returns it, with a function that waits (up to 20 s, else fails)
// until it has ticked n times and the count of its ticks, once its first
// three ticks, a period apart, have come: its next drain is then an hour
// away.
func runSlowDrain(t *testing.T) (s *Sampler, wait func(n int64, what string), ticks *atomic.Int64) {
	t.Helper()
	d := slowDrain{newDraining(1, 10*time.Millisecond, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}}})}
	ticks = new(atomic.Int64)
	s, err := New(Config{Hz: 100, OnTick: func(Progress) { ticks.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	s.Add(d)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	wait = func(n int64, what string) {
		t.Helper()
		testprog.WaitFor(t, 20*time.Second, func() bool { return ticks.Load() >= n }, what)
	}
	wait(3, "3 ticks at 100 Hz")
	time.Sleep(50 * time.Millisecond)
	return s, wait, ticks
}

// TestWakeAndDrainSoonTickAtOnce: a sampler waiting an hour for its next
// drain ticks at once when woken or asked to drain; after a Wake the ticks
// come at most 100 ms apart for a while (an exit may take a few to show),
// after DrainSoon the next drain is an hour away again.
func TestWakeAndDrainSoonTickAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(*Sampler)
		more bool // ticks follow the first
	}{{"Wake", (*Sampler).Wake, true}, {"DrainSoon", (*Sampler).DrainSoon, false}} {
		t.Run(tc.name, func(t *testing.T) {
			s, wait, ticks := runSlowDrain(t)
			before := ticks.Load()
			tc.call(s)
			wait(before+1, "a tick after "+tc.name)
			time.Sleep(500 * time.Millisecond)
			if n := ticks.Load() - before; (n > 1) != tc.more {
				t.Errorf("%d ticks in the 500 ms after %s; more than one: want %v", n, tc.name, tc.more)
			}
		})
	}
}

// exitingDrain is a drainingTarget that drains every 300 ms, whose threads'
// CPU time stops at its exit, and that reports its process's CPU time.
type exitingDrain struct{ *drainingTarget }

func (exitingDrain) DrainInterval() time.Duration { return 300 * time.Millisecond }
func (e exitingDrain) Info(t target.ThreadID) (target.ThreadInfo, error) {
	info, err := e.drainingTarget.Info(t)
	info.CPUTime = e.cpu(t)
	return info, err
}
func (e exitingDrain) ProcessCPU() (time.Duration, error) {
	var sum time.Duration
	for _, t := range e.IDs() {
		sum += e.cpu(t)
	}
	return sum, nil
}

// TestExitAfterALongDrainIntervalCountsOnce: a target that exits most of a
// drain interval after its threads were last listed has the samples the
// kernel took since drained and counted; the same CPU time, which the
// process's clock holds too, is not counted again as [unsampled].
func TestExitAfterALongDrainIntervalCountsOnce(t *testing.T) {
	const hz = 100
	d := exitingDrain{newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1}}})}
	// Ticks at about 10, 20, 30 ms, then every 300 ms: the exit comes
	// about 250 ms after the last listing before it.
	d.ExitAt = time.Now().Add(580 * time.Millisecond)
	ws := run(t, Config{Hz: hz}, 5*time.Second, d)
	w := ws[0]
	taken := int64((d.cpu(1) - d.started[1]) / d.period)
	if d.drained[1] != taken || taken < 40 {
		t.Fatalf("%d samples drained of %d taken up to the exit", d.drained[1], taken)
	}
	// All the CPU time was the one thread's: a few periods of it went
	// before its first capture and around the stop, none twice.
	if u := w.UnsampledCount(); u > 5 {
		t.Errorf("%d samples counted as [unsampled] of %d in all: the samples drained at the exit were counted twice", u, w.SampleCount())
	}
	if got, want := w.SampleCount(), int64(d.cpu(1)/d.period); got > want+2 {
		t.Errorf("%d samples for %d periods of CPU time", got, want)
	}
}
