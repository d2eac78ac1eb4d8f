package sampler

import (
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

func TestCPUModeCountsCPUTime(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{1, 2, 3}},
		2: {Share: 0, Stack: []uint64{4, 5}},
		3: {Share: 0.5, Stack: []uint64{6, 7}},
	})
	const hz, d = 100, time.Second
	ws := run(t, Config{Hz: hz}, d, f)
	if len(ws) != 1 {
		t.Fatalf("%d windows, want 1", len(ws))
	}
	c := countBy(ws[0])
	// One sample per period of CPU from first sight to the end: about 100
	// for the busy thread, 50 for the half-busy one (as many as the CPU
	// time the fake reported in between, which a loaded machine makes
	// longer or shorter than the run's second), none (and no stop at all)
	// for the idle one.
	period := time.Second / hz
	if used, want := f.CPUSeen(1), samplesFor(f.CPUSeen(1), period); c[1] < want*85/100 || c[1] > want+1 {
		t.Errorf("busy thread: %d samples for %v of CPU, want about %d", c[1], used, want)
	}
	if used, want := f.CPUSeen(3), samplesFor(f.CPUSeen(3), period); c[3] < want*80/100 || c[3] > want+1 {
		t.Errorf("half-busy thread: %d samples for %v of CPU, want about %d", c[3], used, want)
	}
	if c[2] != 0 || f.Captures(2) != 0 {
		t.Errorf("idle thread: %d samples, %d captures; want none", c[2], f.Captures(2))
	}
	if ws[0].Period != 10*time.Millisecond || ws[0].Stats.Captures == 0 || ws[0].Stats.StoppedP50 == 0 {
		t.Errorf("window period %v, stats %+v", ws[0].Period, ws[0].Stats)
	}
}

func TestWallModeCountsIdleThreadsWithoutStoppingThem(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{1, 2, 3}},
		2: {Share: 0, Stack: []uint64{4, 5}},
	})
	ws := run(t, Config{Hz: 100, Mode: profile.ModeWall}, 500*time.Millisecond, f)
	c := countBy(ws[0])
	ticks := ws[0].Stats.Ticks
	if c[2] < ticks-2 || c[1] < ticks-2 {
		t.Errorf("wall mode: busy %d, idle %d samples over %d ticks; want one per tick each", c[1], c[2], ticks)
	}
	if f.Captures(2) != 1 {
		t.Errorf("idle thread captured %d times, want once (its stack is reused)", f.Captures(2))
	}
}

func TestAddStartedCountsCPUTimeFromTheProcessStart(t *testing.T) {
	for _, started := range []bool{false, true} {
		t0 := time.Now()
		f := newFake(10, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}}})
		f.Start = f.Start.Add(-300 * time.Millisecond) // it has run for 300 ms already
		s, err := New(Config{Hz: 100})
		if err != nil {
			t.Fatal(err)
		}
		if started {
			s.AddStarted(f)
		} else {
			s.Add(f)
		}
		s.adopt()
		s.win = s.newWindow(time.Now())
		s.tick(1) // first sight
		var total int64
		for _, c := range s.win.counts {
			total += c.n
		}
		// Started during sampling: its 300 ms so far are counted at
		// first sight (30 samples), and the fake's CPU time goes on with
		// the clock until the tick, which a loaded machine can delay by
		// several periods; added while running: none of them.
		late := int64(0)
		if started {
			late = int64(time.Since(t0) / (10 * time.Millisecond))
		}
		if want := map[bool]int64{false: 0, true: 30}[started]; total < want || total > want+late+1 {
			t.Errorf("started %v: %d samples at first sight, want %d", started, total, want)
		}
	}
}

// TestWallModeCountsLateTicksTime: in wall mode each thread stands for the
// wall time since it was last counted, so that ticks that come late (here
// every capture of the busy thread takes 35 ms at 100 Hz, as a loaded
// machine makes them) leave none of its threads' time out: each thread's
// samples add up to the window's duration, not to the ticks that came.
func TestWallModeCountsLateTicksTime(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{1, 2, 3}},
		2: {Share: 0, Stack: []uint64{4, 5}},
	})
	f.Delay = 35 * time.Millisecond
	ws := run(t, Config{Hz: 100, Mode: profile.ModeWall}, 700*time.Millisecond, f)
	var span time.Duration
	c := map[target.ThreadID]int64{}
	for _, w := range ws {
		span += w.End.Sub(w.Start)
		for id, n := range countBy(w) {
			c[id] += n
		}
	}
	due := int64(span / (10 * time.Millisecond))
	for _, id := range []target.ThreadID{1, 2} {
		if c[id] < due*8/10 || c[id] > due+2 {
			t.Errorf("thread %d: %d samples over %v (%d ticks came); want about %d, one per period of wall time", id, c[id], span, ws[0].Stats.Ticks, due)
		}
	}
}

// TestWallDueCountsEveryThreadAtEveryTick: a wall profile is due a sample
// of each listed thread at each tick, late ticks included, so that the
// summary can tell how much of the threads' time a profile whose captures
// failed or came late is missing (a busy 120-thread process on a loaded
// machine gave 25 samples in 6 s, its headline silent about the rest).
func TestWallDueCountsEveryThreadAtEveryTick(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{1, 2, 3}},
		2: {Share: 1, Stack: []uint64{4, 5}, NoSampleEvery: 2},
	})
	f.Delay = 15 * time.Millisecond // two captures a tick: 3 periods
	ws := run(t, Config{Hz: 100, Mode: profile.ModeWall}, 600*time.Millisecond, f)
	var st profile.Stats
	var held int64
	c := map[target.ThreadID]int64{}
	for _, w := range ws {
		st.Ticks += w.Stats.Ticks
		st.MissedTicks += w.Stats.MissedTicks
		st.WallDue += w.Stats.WallDue
		held += w.SampleCount()
		for id, n := range countBy(w) {
			c[id] += n
		}
	}
	if st.MissedTicks == 0 {
		t.Fatalf("no tick came late with 30 ms of captures a 10 ms tick: the test proves nothing")
	}
	// Two threads listed at each tick, and each late tick after the
	// first was due both (none before the first listing).
	if lo, hi := 2*st.Ticks, 2*(st.Ticks+st.MissedTicks); st.WallDue < lo || st.WallDue > hi {
		t.Errorf("wall due %d over %d ticks and %d late; want %d to %d", st.WallDue, st.Ticks, st.MissedTicks, lo, hi)
	}
	// Thread 1's captures all worked: its samples, late ticks carried,
	// are its half of what was due; thread 2's failed captures lost
	// theirs, which the due count shows as missing.
	if half := st.WallDue / 2; c[1] < half*8/10 || c[1] > half+2 {
		t.Errorf("thread 1: %d samples of %d due", c[1], half)
	}
	if held >= st.WallDue || c[2] >= c[1] {
		t.Errorf("held %d of %d due (thread 1 %d, thread 2 %d); want thread 2's failed captures missing", held, st.WallDue, c[1], c[2])
	}
}
