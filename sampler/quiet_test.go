package sampler

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/macprof/macprof/target"
)

// slowDrain is a drainingTarget whose rings hold an hour of samples.
type slowDrain struct{ *drainingTarget }

func (slowDrain) DrainInterval() time.Duration { return time.Hour }

// TestSettledCapsTheDrainInterval: with Config.Settled set, drains come as
// seldom as the target allows only while it reports that nothing was
// created since it was last asked; otherwise every listEvery. Without it,
// as the target allows.
func TestSettledCapsTheDrainInterval(t *testing.T) {
	d := slowDrain{newDraining(1, 50*time.Millisecond, map[target.ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1, 2}}})}
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
		if got := s.interval(); got != tc.want {
			t.Errorf("Settled %v: interval %v, want %v", tc.fn != nil, got, tc.want)
		}
		if tc.fn != nil {
			settled = true
			if got := s.interval(); got != time.Hour {
				t.Errorf("settled: interval %v, want an hour", got)
			}
			if asked != 2 {
				t.Errorf("Settled asked %d times for two intervals", asked)
			}
		}
	}
}

// TestWakeTicksAtOnce: a sampler waiting an hour for its next drain ticks
// at once when woken.
func TestWakeTicksAtOnce(t *testing.T) {
	d := slowDrain{newDraining(1, 10*time.Millisecond, map[target.ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1, 2}}})}
	var ticks atomic.Int64
	s, err := New(Config{Hz: 100, OnTick: func(Progress) { ticks.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	s.Add(d)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wait := func(n int64) bool {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if ticks.Load() >= n {
				return true
			}
		}
		return false
	}
	// The first three ticks come a period apart, then the drain is an
	// hour away.
	if !wait(3) {
		t.Fatalf("%d ticks in 20 s at 100 Hz", ticks.Load())
	}
	time.Sleep(50 * time.Millisecond)
	before := ticks.Load()
	s.Wake()
	if !wait(before + 1) {
		t.Fatal("no tick within 20 s of Wake")
	}
}
