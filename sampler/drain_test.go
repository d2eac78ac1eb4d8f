package sampler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

// drainingTarget is a fakeTarget whose kernel samples each thread once per
// period of its CPU time (SampleDrainer). A thread's samples start at its
// first Capture, as a backend's ring opens there; each sample's stack ends
// in its sequence number (mod 97), so that counts per stack show whether
// each drained sample was counted once.
type drainingTarget struct {
	*targettest.Fake
	period  time.Duration
	refused bool // KernelSampled reports a thread that had to be stopped
	keep    int  // with lose: of every lose samples only the first keep reach the ring
	lose    int  //
	// dropped counts, per thread, the samples lost since LostSamples
	// was last asked (the ring was full): lossReporter reports them.
	dropped map[target.ThreadID]int64
	taken   map[target.ThreadID]int64 // samples the kernel took so far
	drained map[target.ThreadID]int64 // samples handed out so far
	started map[target.ThreadID]time.Duration
	// firstSight is each thread's CPU time when Info was first asked for
	// it; startWait how long this process waited for a CPU (schedWait)
	// from then to the thread's first Capture.
	firstSight map[target.ThreadID]time.Duration
	startWait  map[target.ThreadID]time.Duration
	drains     int
	listings   int  // Threads calls
	endless    bool // every drain fills every capture
	// maxDrain is the ceiling of its drain interval (0: the default);
	// drainPeriods the periods it holds (0: 10).
	maxDrain     time.Duration
	drainPeriods int
	// The time of the last drain and the samples taken by then.
	lastDrain time.Time
	lastTaken map[target.ThreadID]int64
	// drainedAt, when not nil, notes the time of each drain of a thread
	// whose samples have started, and capturedAt of its first capture.
	drainedAt, capturedAt map[target.ThreadID][]time.Time
}

func newDraining(pid int, period time.Duration, threads map[target.ThreadID]*targettest.Thread) *drainingTarget {
	return &drainingTarget{Fake: newFake(pid, threads), period: period,
		taken: map[target.ThreadID]int64{}, drained: map[target.ThreadID]int64{}, started: map[target.ThreadID]time.Duration{},
		lastTaken: map[target.ThreadID]int64{}, dropped: map[target.ThreadID]int64{}, firstSight: map[target.ThreadID]time.Duration{}, startWait: map[target.ThreadID]time.Duration{}}
}

// cpu returns a thread's CPU time: its share of the time since the start,
// up to the exit if there is one.
func (d *drainingTarget) cpu(t target.ThreadID) time.Duration {
	now := time.Now()
	if !d.ExitAt.IsZero() && now.After(d.ExitAt) {
		now = d.ExitAt
	}
	return time.Duration(float64(now.Sub(d.Start)) * d.Thread(t).Share)
}

func (d *drainingTarget) KernelSampled() (bool, bool) { return true, !d.refused }
func (d *drainingTarget) Threads(dst []target.ThreadID) ([]target.ThreadID, error) {
	d.listings++
	return d.Fake.Threads(dst)
}
func (d *drainingTarget) DrainInterval() time.Duration {
	return target.DrainInterval(d.period, d.maxDrain, cmp.Or(d.drainPeriods, 10))
}

func (d *drainingTarget) Info(t target.ThreadID) (target.ThreadInfo, error) {
	info, err := d.Fake.Info(t)
	if _, ok := d.firstSight[t]; !ok && err == nil {
		d.firstSight[t], d.startWait[t] = info.CPUTime, schedWait()
	}
	return info, err
}

func (d *drainingTarget) Capture(t target.ThreadID, c *target.Capture) error {
	if _, ok := d.started[t]; !ok {
		d.started[t] = d.cpu(t)
		d.startWait[t] = max(0, schedWait()-d.startWait[t])
		if d.capturedAt != nil {
			d.capturedAt[t] = append(d.capturedAt[t], time.Now())
		}
	}
	return d.Fake.Capture(t, c)
}

func (d *drainingTarget) DrainSamples(t target.ThreadID, caps []*target.Capture) (int, error) {
	d.drains++
	start, ok := d.started[t]
	if !ok {
		return 0, target.ErrNotKernelSampled
	}
	if d.drainedAt != nil {
		d.drainedAt[t] = append(d.drainedAt[t], time.Now())
	}
	total := int64((d.cpu(t) - start) / d.period)
	if d.endless {
		total = d.drained[t] + int64(len(caps))
	}
	d.lastDrain, d.lastTaken[t] = time.Now(), total
	n := 0
	for d.drained[t] < total && n < len(caps) {
		seq := d.drained[t]
		d.drained[t]++
		if d.lose > 0 && int(seq)%d.lose >= d.keep {
			d.dropped[t]++
			continue // dropped: the ring was full
		}
		c := caps[n]
		c.Thread, c.Stopped = t, 0
		c.PCs = append(append(c.PCs[:0], d.Thread(t).Stack...), 0x5000+uint64(seq%97))
		n++
	}
	return n, nil
}

// lossReporter is a drainingTarget that tells the samples it dropped
// (target.SampleLossReporter), as a ring's PERF_RECORD_LOST does.
type lossReporter struct{ *drainingTarget }

func (d lossReporter) LostSamples(t target.ThreadID) int64 {
	n := d.dropped[t]
	d.dropped[t] = 0
	return n
}

// drainedCounts splits a thread's counts in w into those on its stop
// capture's stack (the fake's stack as is) and those on drained samples'
// stacks (which end in a sequence number), and counts the latter's
// distinct stacks; counts on [lost] stacks are in neither.
func drainedCounts(w *profile.Window, tid target.ThreadID, stack []uint64) (stopped, sampled int64, stacks int) {
	for _, s := range w.Samples {
		if s.Thread != tid || w.Stacks[s.Stack].Lost != profile.NotLost {
			continue
		}
		if len(w.Stacks[s.Stack].PCs) == len(stack) {
			stopped += s.Count
		} else {
			sampled += s.Count
			stacks++
		}
	}
	return stopped, sampled, stacks
}

func TestDrainCountsEveryKernelSampleAndWakesLessOften(t *testing.T) {
	const hz = 100
	d := newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{1, 2, 3}},
		2: {Share: 0.5, Stack: []uint64{4, 5}},
		3: {Share: 0, Stack: []uint64{6}},
	})
	ws := run(t, Config{Hz: hz}, 1200*time.Millisecond, d)
	w := ws[0]
	c := countBy(w)
	if c[3] != 0 || d.Captures(3) != 0 {
		t.Errorf("idle thread: %d samples, %d captures; want none", c[3], d.Captures(3))
	}
	if d.Captures(1) != 1 || d.Captures(2) != 1 {
		t.Errorf("threads captured %d and %d times, want once each (to start their samples)", d.Captures(1), d.Captures(2))
	}
	// The first tick a thread ran captures it once (a stop, counting its
	// CPU time so far); then every sample the kernel took is counted,
	// once, on its own stack. (The CPU time after the last drain and the
	// part period pending at it are not counted; on a loaded machine the
	// CPU time between reading it and the first capture, which no sample
	// covers, may add a catch-up count or two on the last stack.)
	for tid, stack := range map[target.ThreadID][]uint64{1: {1, 2, 3}, 2: {4, 5}} {
		stopped, sampled, stacks := drainedCounts(w, tid, stack)
		if n := d.drained[tid]; stopped == 0 || sampled < n || sampled > n+2 || int64(stacks) < min(n, 97) {
			t.Errorf("thread %d: %d samples on the stop's stack, %d on %d samples' stacks; %d samples drained, want each counted once on its own stack",
				tid, stopped, sampled, stacks, d.drained[tid])
		}
	}
	if c[1] < 90 || c[2] < 40 || c[2] > c[1]*6/10 {
		t.Errorf("busy thread %d samples, half-busy %d, for 1.2 s at 100 Hz; want about 110 and 55", c[1], c[2])
	}
	// Woken every DrainInterval (100 ms at 100 Hz), not every period:
	// three ticks a period apart to start, then one per interval, and a
	// last one at the end.
	if st := w.Stats; st.Ticks < 8 || st.Ticks > 17 {
		t.Errorf("%d ticks in 1.2 s, want about 15 (three, then one per drain interval)", st.Ticks)
	}
}

// TestDrainListsThreadsLessOftenThanItDrains: at 1000 Hz the target's
// rings are drained every 10 ms, but its threads are listed (and their CPU
// time read) only every listEvery, and every sample is still counted once.
func TestDrainListsThreadsLessOftenThanItDrains(t *testing.T) {
	const hz, runFor = 1000, 600 * time.Millisecond
	d := newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}}})
	begin := time.Now()
	ws := run(t, Config{Hz: hz}, runFor, d)
	elapsed := time.Since(begin)
	// Three listings a period apart to start, one per listEvery (less a
	// tenth, as ticks may come early), the last tick's, and two for
	// ticks a loaded machine made late.
	if most := 3 + int(elapsed/(listEvery*9/10)) + 1 + 2; d.listings > most {
		t.Errorf("threads listed %d times in %v, want at most %d (one per %v)", d.listings, elapsed, most, listEvery)
	}
	if d.drains < 2*d.listings {
		t.Errorf("%d drains and %d listings in %v at %d Hz: want drains every 10 ms between listings", d.drains, d.listings, elapsed, hz)
	}
	stopped, sampled, _ := drainedCounts(ws[0], 1, []uint64{1, 2})
	if n := d.drained[1]; stopped == 0 || sampled < n || sampled > n+2 || n < 300 {
		t.Errorf("%d samples on the stop's stack, %d on drained samples' stacks; %d drained, want each counted once", stopped, sampled, n)
	}
}

// watchingTarget is a drainingTarget that tells whether its threads
// changed since the last listing (target.ThreadWatcher).
type watchingTarget struct {
	*drainingTarget
	unchanged bool
	asked     int
	// imagesUnchanged is what ImagesUnchanged tells; imagesAsked counts
	// the calls.
	imagesUnchanged bool
	imagesAsked     int
}

func (w *watchingTarget) ThreadsUnchanged() bool {
	w.asked++
	return w.unchanged
}

func (w *watchingTarget) ImagesUnchanged() bool {
	w.imagesAsked++
	return w.imagesUnchanged
}

// TestLoadingCommandTicksOnlyWhenItMayHaveMappedCode: a launched command
// whose kernel samples are drained once a second is, while it loads its
// libraries, ticked every listEvery only while its backend cannot tell
// that it mapped no code since its last listing (a thread without a ring
// keeps ThreadsUnchanged false); while it can, those ticks are skipped
// (idlePoll) and the threads are listed at the drains alone.
func TestLoadingCommandTicksOnlyWhenItMayHaveMappedCode(t *testing.T) {
	const hz, runFor = 5, 2 * time.Second
	listings := map[bool]int{}
	for _, quiet := range []bool{true, false} {
		listings[quiet] = runLoadingCommand(t, hz, runFor, quiet).listings
	}
	// Quiet: three listings a period apart to start, one a second, the
	// last tick's, and two for ticks a loaded machine made late. Not
	// quiet: one every listEvery after the first three, but for late
	// ticks.
	if most := 3 + 2 + 1 + 2; listings[true] > most {
		t.Errorf("no code mapped: threads listed %d times in %v, want at most %d (the drains a second apart)", listings[true], runFor, most)
	}
	if listings[false] < listings[true]+4 {
		t.Errorf("code may have been mapped: threads listed %d times in %v, %d when none was; want one every %v", listings[false], runFor, listings[true], listEvery)
	}
	t.Logf("listings in %v: %d while no code was mapped, %d while it may have been", runFor, listings[true], listings[false])
}

// TestLoadingPollsEndAfterTheLoadingSpan: a launched command counts as
// loading its libraries for loadingSpan from its start, however rarely
// the ticks that list it come (its drains a second apart): the polls
// every listEvery that look for code it mapped end then. (They followed
// the reads of its images, whose schedule grows only at listings, and
// went on for 3.4 s here.)
func TestLoadingPollsEndAfterTheLoadingSpan(t *testing.T) {
	const hz, runFor = 5, 3 * time.Second
	d := runLoadingCommand(t, hz, runFor, true)
	// At most one poll each listEvery of the span; a loaded machine
	// makes ticks late, not more of them.
	if most := int(loadingSpan / listEvery); d.imagesAsked > most {
		t.Errorf("%d polls for mapped code in %v, want at most %d (one every %v for the first %v)", d.imagesAsked, runFor, most, listEvery, loadingSpan)
	}
	if d.imagesAsked == 0 {
		t.Errorf("no poll for mapped code while the command loaded")
	}
	t.Logf("%d polls for mapped code in %v", d.imagesAsked, runFor)
}

// runLoadingCommand samples for runFor, at hz, a launched command of one
// busy thread whose kernel samples are drained once a second and whose
// backend tells, when quiet, that it mapped no code since its last listing.
func runLoadingCommand(t *testing.T, hz int, runFor time.Duration, quiet bool) *watchingTarget {
	t.Helper()
	d := &watchingTarget{drainingTarget: newDraining(10, time.Second/time.Duration(hz), map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}}}), imagesUnchanged: quiet}
	d.maxDrain = time.Second
	s, err := New(Config{Hz: hz})
	if err != nil {
		t.Fatal(err)
	}
	s.AddStarted(d)
	ctx, cancel := context.WithTimeout(context.Background(), runFor)
	defer cancel()
	if err := s.Run(ctx); err != nil && !errors.Is(err, ErrAllExited) {
		t.Fatal(err)
	}
	return d
}

// TestDrainListsThreadsOnlyWhileTheyMayHaveChanged: at 100 Hz the rings
// are drained every 100 ms; while the backend tells that no thread
// started, ended or changed, the threads are listed only every
// quietListEvery, and every sample is still counted once; while it cannot
// tell, they are listed at every drain, as without it.
func TestDrainListsThreadsOnlyWhileTheyMayHaveChanged(t *testing.T) {
	const hz, runFor = 100, 1500 * time.Millisecond
	for _, unchanged := range []bool{true, false} {
		d := &watchingTarget{drainingTarget: newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}}}), unchanged: unchanged}
		begin := time.Now()
		ws := run(t, Config{Hz: hz}, runFor, d)
		elapsed := time.Since(begin)
		ticks := ws[0].Stats.Ticks
		if unchanged {
			// Three listings a period apart to start, one per
			// quietListEvery (less a tenth, as ticks may come
			// early), the last tick's, and two for ticks a loaded
			// machine made late.
			if most := 3 + int(elapsed/(quietListEvery*9/10)) + 1 + 2; d.listings > most || d.asked == 0 {
				t.Errorf("unchanged: threads listed %d times in %v (%d ticks, asked %d times), want at most %d (one per %v)", d.listings, elapsed, ticks, d.asked, most, quietListEvery)
			}
		} else if d.listings < int(ticks)-1 {
			t.Errorf("changed: threads listed %d times in %d ticks, want at every tick", d.listings, ticks)
		}
		stopped, sampled, _ := drainedCounts(ws[0], 1, []uint64{1, 2})
		if n := d.drained[1]; stopped == 0 || sampled < n || sampled > n+2 || n < 100 {
			t.Errorf("unchanged %v: %d samples on the stop's stack, %d on drained samples' stacks; %d drained, want each counted once", unchanged, stopped, sampled, n)
		}
	}
}

// TestDrainTakesRingsOpenedAtAListing: a thread first captured at a
// listing of a target whose threads are listed only every quietListEvery
// (its capture starts its kernel samples, as ptrace's opens its ring) is
// drained at the ticks that only drain from then on, as a thread drained
// since the start is: its ring would otherwise wait for the next listing,
// longer than a kernel buffer holds.
func TestDrainTakesRingsOpenedAtAListing(t *testing.T) {
	const hz = 100
	d := &watchingTarget{drainingTarget: newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{1, 2}},
		// A period of CPU time only after ~330 ms: first captured
		// at a quiet listing.
		2: {Share: 0.03, Stack: []uint64{3, 4}},
	}), unchanged: true}
	d.drainedAt, d.capturedAt = map[target.ThreadID][]time.Time{}, map[target.ThreadID][]time.Time{}
	run(t, Config{Hz: hz}, 1800*time.Millisecond, d)
	if len(d.capturedAt[2]) == 0 {
		t.Fatal("the slow thread was never captured")
	}
	from := d.capturedAt[2][0]
	// Drains of a thread after from, those of one tick (microseconds
	// apart) counted once.
	ticks := func(tid target.ThreadID) int {
		n := 0
		var last time.Time
		for _, at := range d.drainedAt[tid] {
			if at.After(from) && at.Sub(last) > 5*time.Millisecond {
				n++
			}
			last = at
		}
		return n
	}
	busy, slow := ticks(1), ticks(2)
	if busy < 4 {
		t.Fatalf("the busy thread drained at %d ticks after the slow one's capture at %v; want a run of ticks after it", busy, from.Sub(d.Start))
	}
	if slow < busy-1 {
		t.Errorf("the thread first captured at %v was drained at %d ticks after it, the busy thread at %d: its samples waited for listings", from.Sub(d.Start), slow, busy)
	}
}

// TestDrainIntervalIsTheTargets: the sampler wakes as often as the target's
// buffers need (an agent's target asks for a longer ceiling), and every
// sample is still counted.
func TestDrainIntervalIsTheTargets(t *testing.T) {
	const hz = 20
	d := newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}}})
	d.maxDrain = time.Second // 10 periods: a drain every 500 ms
	ws := run(t, Config{Hz: hz}, 1600*time.Millisecond, d)
	w := ws[0]
	if st := w.Stats; st.Ticks < 4 || st.Ticks > 8 {
		t.Errorf("%d ticks in 1.6 s, want about 6 (three a period apart, then one per 500 ms, and the last)", st.Ticks)
	}
	if c := countBy(w); c[1] < 24 || c[1] > 34 {
		t.Errorf("busy thread: %d samples in 1.6 s at 20 Hz, want about 32", c[1])
	}
}

// TestDrainIntervalEndsWindowsOnTime: a drain interval longer than what is
// left of a window is cut to the window's end, so windows keep their length.
func TestDrainIntervalEndsWindowsOnTime(t *testing.T) {
	const hz, window = 20, 300 * time.Millisecond
	d := newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}}})
	d.maxDrain = time.Second // 10 periods: a drain every 500 ms
	// Four windows and the last, cut short: about 1.5 s.
	ws, waits := runWindows(t, Config{Hz: hz, Window: window}, 10*time.Second,
		func(ws []*profile.Window) bool { return len(ws) == 4 }, d)
	// Windows of 300 ms (and windowSlop), not 500 or more as a drain
	// every 500 ms would make them; longer only as much as the machine's
	// load made the tick that closed them late.
	checkWindowLengths(t, ws, waits, window, 80*time.Millisecond)
}

// TestDrainCountsLostSamplesApart: of every three samples the kernel
// takes, two are lost (its buffer was full). Their CPU time is counted on a
// [lost] stack, as the kernel reported it (buffer full) or, from a backend
// that cannot tell, as CPU time no sample accounts for; never on the
// thread's stacks, which hold exactly the samples drained.
func TestDrainCountsLostSamplesApart(t *testing.T) {
	const hz = 100
	for _, c := range []struct {
		name   string
		report bool
		want   profile.LostReason
	}{{"reported", true, profile.LostBufferFull}, {"unreported", false, profile.LostNoSample}} {
		t.Run(c.name, func(t *testing.T) {
			d := newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}}})
			d.keep, d.lose = 1, 3
			var tg target.Target = d
			if c.report {
				tg = lossReporter{d}
			}
			w := run(t, Config{Hz: hz}, time.Second, tg)[0]
			stopped, sampled, _ := drainedCounts(w, 1, []uint64{1, 2})
			var lost [profile.NumLostReasons]int64
			for _, s := range w.Samples {
				if r := w.Stacks[s.Stack].Lost; r != profile.NotLost {
					if len(w.Stacks[s.Stack].PCs) != 0 || s.Thread != 1 {
						t.Errorf("lost stack %+v of thread %d", w.Stacks[s.Stack], s.Thread)
					}
					lost[r] += s.Count
				}
			}
			taken := d.drained[1]
			kept := (taken + 2) / 3
			// (The part period after the last sample, settled at the
			// end, goes on the last stack: a count or two.)
			if taken < 30 || stopped == 0 || sampled < kept || sampled > kept+2 {
				t.Fatalf("%d samples taken after the first capture, %d kept; %d counted on the samples' stacks, want the kept", taken, kept, sampled)
			}
			// All of the lost but the period of slack the sampler gives
			// the kernel's next sample and the part period pending; at
			// most what the CPU time the sampler last read holds (a
			// loaded machine can read it later than the last drain), and
			// the part period settled at the end (one count: 98 for 97
			// seen 8 times in 110 runs at load 40-70).
			most := samplesFor(d.LastCPU(1)-d.started[1], d.period) + 2
			if got := lost[c.want]; got < taken-kept-3 || got+sampled > max(taken+2, most) {
				t.Errorf("%d samples counted as %s (%v), want the %d lost (%d counted in all at most)", got, c.want.Frame(), lost, taken-kept, most)
			}
			if c.report && lost[profile.LostNoSample] > 2 {
				t.Errorf("%d samples counted as %s although the backend told every loss", lost[profile.LostNoSample], profile.LostNoSample.Frame())
			}
		})
	}
}

func TestDrainTicksEveryPeriodWhenAThreadIsStoppedForItsSamples(t *testing.T) {
	const hz = 100
	d := newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1}}})
	d.refused = true
	ws := run(t, Config{Hz: hz}, 500*time.Millisecond, d)
	// Ticks a loaded machine made late count as missed (only a loop
	// ticking every period counts them): a loop woken every drain interval
	// would make about 7 in all.
	if st := ws[0].Stats; st.Ticks+st.MissedTicks < 40 {
		t.Errorf("%d ticks (%d missed) in 500 ms at 100 Hz with a thread refused kernel samples, want one per period", st.Ticks, st.MissedTicks)
	}
}

func TestDrainTakesTheLastSamplesOfATargetThatExits(t *testing.T) {
	const hz = 100
	d := newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1}}})
	d.ExitAt = time.Now().Add(590 * time.Millisecond)
	run(t, Config{Hz: hz}, 5*time.Second, d)
	// Ticks at about 10, 20, 30 ms, then every 100 ms: the last drain
	// before the exit at about 530 ms, the exit found at about 630 ms. The
	// samples the kernel took up to the exit are drained then.
	taken := int64((d.cpu(1) - d.started[1]) / d.period)
	if d.drained[1] != taken || taken < 40 {
		t.Errorf("%d samples drained of %d taken up to the exit", d.drained[1], taken)
	}
}

// TestDrainDoesNotAllocate: draining ticks allocate nothing in steady
// state, with a timeline kept (Config.Timeline) or not.
func TestDrainDoesNotAllocate(t *testing.T) {
	for _, timeline := range []int{0, 1 << 20} {
		t.Run(fmt.Sprint("timeline=", timeline), func(t *testing.T) { testDrainDoesNotAllocate(t, timeline) })
	}
}

func testDrainDoesNotAllocate(t *testing.T, timeline int) {
	const hz = 1000
	d := newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{1, 2, 3}}, 2: {Share: 1, Stack: []uint64{4, 5}},
	})
	s := tickable(t, Config{Hz: hz, Timeline: timeline}, d)
	tick := int64(0)
	for i := 0; i < 300; i++ { // warm up: every stack interned, every map entry made
		tick++
		d.Start = d.Start.Add(-2 * time.Millisecond)
		s.tick(tick)
	}
	allocs := testing.AllocsPerRun(50, func() {
		tick++
		d.Start = d.Start.Add(-2 * time.Millisecond) // 2 samples per tick
		s.tick(tick)
	})
	if allocs != 0 {
		t.Fatalf("a draining tick allocates %.1f times", allocs)
	}
	// Ticks 1 ms apart, between listings: they only drain.
	s.drains.every = time.Millisecond
	listings := d.listings
	allocs = testing.AllocsPerRun(50, func() {
		tick++
		d.Start = d.Start.Add(-2 * time.Millisecond)
		s.tick(tick)
	})
	if allocs != 0 || d.listings > listings+1 {
		t.Fatalf("a tick that only drains allocates %.1f times (%d listings in 51 ticks)", allocs, d.listings-listings)
	}
	if d.drains == 0 || d.drained[1] < 500 {
		t.Fatalf("%d drains, %d samples drained: the test did not drain", d.drains, d.drained[1])
	}
}

func TestDrainOfABackendThatNeverRunsDryEnds(t *testing.T) {
	d := newDraining(10, 10*time.Millisecond, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1}}})
	d.endless = true
	s := tickable(t, Config{Hz: 100}, d)
	d.started[1] = 0
	s.tick(1)
	if got := d.drained[1]; got < maxDrained || got > maxDrained+drainBatch {
		t.Fatalf("%d samples drained in one tick from a backend that never runs dry, want the bound %d", got, maxDrained)
	}
}

func TestDrainStartsSamplesAPeriodAfterFirstSightAndDrainsAtTheEnd(t *testing.T) {
	const hz, runFor = 100, 590 * time.Millisecond
	d := newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1}}})
	begin := time.Now()
	ws := run(t, Config{Hz: hz}, runFor, d)
	// First sight at the first tick (a period in), the capture that starts
	// the samples one or two periods later, not a drain interval later.
	// (Measured from first sight, which a loaded machine may make late,
	// and allowing for the ticks in between being late as much as this
	// process waited for a CPU then: a drain interval is 100 ms.)
	if after, most := d.started[1]-d.firstSight[1], 2*d.period+30*time.Millisecond+d.startWait[1]; after > most {
		t.Errorf("samples started after %v of CPU from first sight (%v), want one or two periods (10-20 ms), at most %v (%v waiting for a CPU)",
			after, d.firstSight[1], most, d.startWait[1])
	}
	// The run ended between drains (the last at about 530 ms): the samples
	// since were drained at its end.
	if at := d.lastDrain.Sub(begin); at < runFor {
		t.Errorf("last drain %v into a run of %v", at, runFor)
	}
	if d.drained[1] != d.lastTaken[1] {
		t.Errorf("%d of %d samples drained", d.drained[1], d.lastTaken[1])
	}
	if _, sampled, _ := drainedCounts(ws[0], 1, []uint64{1}); sampled < d.drained[1] {
		t.Errorf("%d samples counted of %d drained", sampled, d.drained[1])
	}
}

// TestDrainStartsSamplesOfAThreadSlowToUseAPeriod: a thread given a third
// of a CPU (a loaded machine) has used less than a period by the first
// three ticks; the ticks stay a period apart until its first capture
// starts its kernel samples, rather than going to a drain interval of a
// second and counting all that CPU time on the one stack of that capture.
func TestDrainStartsSamplesOfAThreadSlowToUseAPeriod(t *testing.T) {
	const hz = 20
	d := newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{1: {Share: 0.3, Stack: []uint64{1, 2}}})
	d.maxDrain = 2 * time.Second // an agent's: a drain a second at 20 Hz
	ws := run(t, Config{Hz: hz}, 1500*time.Millisecond, d)
	// Its first capture comes after a period of its CPU time (one or two
	// ticks later, as a tick may come early), plus what this process
	// waited for a CPU meanwhile.
	if after, most := d.started[1]-d.firstSight[1], 2*d.period+30*time.Millisecond+d.startWait[1]; after > most {
		t.Errorf("samples started after %v of CPU from first sight, want at most %v (%v waiting for a CPU)", after, most, d.startWait[1])
	}
	stopped, sampled, _ := drainedCounts(ws[0], 1, []uint64{1, 2})
	if stopped > 2 {
		t.Errorf("%d samples on the stack of the first capture (%d kernel samples), want at most 2: a backlog counted on one stack", stopped, sampled)
	}
}

// TestLoadingCommandsWindowsKeepTheirLength: the ticks skipped while a
// loading command mapped nothing (idlePoll) never include the one that
// closes a window: each window of a recording with windows (the agent's)
// ends within a tick's slack of its length.
func TestLoadingCommandsWindowsKeepTheirLength(t *testing.T) {
	const hz, window, runFor = 10, 250 * time.Millisecond, 1600 * time.Millisecond
	d := &watchingTarget{drainingTarget: newDraining(10, time.Second/hz, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}}}), imagesUnchanged: true}
	d.maxDrain = time.Second
	var ws []*profile.Window
	s, err := New(Config{Hz: hz, Window: window, OnWindow: func(w *profile.Window) { ws = append(ws, w) }})
	if err != nil {
		t.Fatal(err)
	}
	s.AddStarted(d)
	ctx, cancel := context.WithTimeout(context.Background(), runFor)
	defer cancel()
	wait0 := schedWait()
	if err := s.Run(ctx); err != nil && !errors.Is(err, ErrAllExited) {
		t.Fatal(err)
	}
	slack := 60*time.Millisecond + schedWait() - wait0
	for i, w := range ws[:len(ws)-1] { // the last ends with the run
		if l := w.End.Sub(w.Start); l > window+slack {
			t.Errorf("window %d of %d lasted %v, want at most %v + %v", i, len(ws), l, window, slack)
		}
	}
}
