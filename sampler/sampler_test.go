package sampler

import (
	"context"
	"encoding/binary"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/intern"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// fakeThread uses share of a CPU from the moment the fake target starts.
type fakeThread struct {
	share float64
	stack []uint64
	// stacks, when set, cycles through distinct stacks capture by capture.
	stacks int
	// noSampleEvery, when set, makes every such capture (the first
	// included) fail with ErrNoSample, as a kernel sample not yet taken.
	noSampleEvery int
}

// fakeTarget is a Target whose threads' CPU time follows the wall clock.
type fakeTarget struct {
	mu       sync.Mutex
	pid      int
	start    time.Time
	threads  map[target.ThreadID]*fakeThread
	captures map[target.ThreadID]int
	delay    time.Duration // how long each capture takes
	exitAt   time.Time
	n        uint64
}

func newFake(pid int, threads map[target.ThreadID]*fakeThread) *fakeTarget {
	return &fakeTarget{pid: pid, start: time.Now(), threads: threads, captures: map[target.ThreadID]int{}}
}

func (f *fakeTarget) exited() bool { return !f.exitAt.IsZero() && time.Now().After(f.exitAt) }

func (f *fakeTarget) PID() int          { return f.pid }
func (f *fakeTarget) Arch() unwind.Arch { return unwind.ArchAMD64 }
func (f *fakeTarget) Threads(dst []target.ThreadID) ([]target.ThreadID, error) {
	dst = dst[:0]
	if f.exited() {
		return dst, errors.New("exited")
	}
	for id := target.ThreadID(1); int(id) <= len(f.threads); id++ {
		dst = append(dst, id)
	}
	return dst, nil
}
func (f *fakeTarget) Info(t target.ThreadID) (target.ThreadInfo, error) {
	th := f.threads[t]
	cpu := time.Duration(float64(time.Since(f.start)) * th.share)
	return target.ThreadInfo{ID: t, Name: "worker", CPUTime: cpu, Running: th.share > 0}, nil
}
func (f *fakeTarget) Capture(t target.ThreadID, c *target.Capture) error {
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	f.mu.Lock()
	f.captures[t]++
	f.n++
	n := f.n
	f.mu.Unlock()
	th := f.threads[t]
	if th.noSampleEvery > 0 && (f.captures[t]-1)%th.noSampleEvery == 0 {
		return target.ErrNoSample
	}
	c.PCs = append(c.PCs[:0], th.stack...)
	if th.stacks > 0 {
		c.PCs = append(c.PCs, 0x9000+n%uint64(th.stacks))
	}
	c.Stopped = 10 * time.Microsecond
	return nil
}
func (f *fakeTarget) CaptureAll(dst []target.Capture) ([]target.Capture, error) { return dst, nil }
func (f *fakeTarget) Images() (*images.Set, error)                              { return images.NewSet(nil), nil }
func (f *fakeTarget) ReadMemory(uint64, []byte) error                           { return errors.New("no memory") }
func (f *fakeTarget) Close() error                                              { return nil }

func run(t *testing.T, cfg Config, d time.Duration, targets ...target.Target) []*profile.Window {
	t.Helper()
	var ws []*profile.Window
	cfg.OnWindow = func(w *profile.Window) { ws = append(ws, w) }
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		s.Add(tg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := s.Run(ctx); err != nil && !errors.Is(err, ErrAllExited) {
		t.Fatal(err)
	}
	return ws
}

// tickable returns a Sampler for cfg with targets adopted and a window
// open, ready for tick calls without Run.
func tickable(t *testing.T, cfg Config, targets ...target.Target) *Sampler {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		s.Add(tg)
	}
	s.adopt()
	s.win = s.newWindow(time.Now())
	return s
}

func countBy(w *profile.Window) map[target.ThreadID]int64 {
	m := map[target.ThreadID]int64{}
	for _, s := range w.Samples {
		m[s.Thread] += s.Count
	}
	return m
}

func TestCPUModeCountsCPUTime(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*fakeThread{
		1: {share: 1, stack: []uint64{1, 2, 3}},
		2: {share: 0, stack: []uint64{4, 5}},
		3: {share: 0.5, stack: []uint64{6, 7}},
	})
	const hz, d = 100, time.Second
	ws := run(t, Config{Hz: hz}, d, f)
	if len(ws) != 1 {
		t.Fatalf("%d windows, want 1", len(ws))
	}
	c := countBy(ws[0])
	// One sample per period of CPU: about 100 for the busy thread, 50 for
	// the half-busy one, none (and no stop at all) for the idle one.
	if c[1] < 85 || c[1] > 101 {
		t.Errorf("busy thread: %d samples, want about 100", c[1])
	}
	if c[3] < 40 || c[3] > 51 {
		t.Errorf("half-busy thread: %d samples, want about 50", c[3])
	}
	if c[2] != 0 || f.captures[2] != 0 {
		t.Errorf("idle thread: %d samples, %d captures; want none", c[2], f.captures[2])
	}
	if ws[0].Period != 10*time.Millisecond || ws[0].Stats.Captures == 0 || ws[0].Stats.StoppedP50 == 0 {
		t.Errorf("window period %v, stats %+v", ws[0].Period, ws[0].Stats)
	}
}

func TestWallModeCountsIdleThreadsWithoutStoppingThem(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*fakeThread{
		1: {share: 1, stack: []uint64{1, 2, 3}},
		2: {share: 0, stack: []uint64{4, 5}},
	})
	ws := run(t, Config{Hz: 100, Mode: profile.ModeWall}, 500*time.Millisecond, f)
	c := countBy(ws[0])
	ticks := ws[0].Stats.Ticks
	if c[2] < ticks-2 || c[1] < ticks-2 {
		t.Errorf("wall mode: busy %d, idle %d samples over %d ticks; want one per tick each", c[1], c[2], ticks)
	}
	if f.captures[2] != 1 {
		t.Errorf("idle thread captured %d times, want once (its stack is reused)", f.captures[2])
	}
}

func TestLateTicksAreMissedNotBunched(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1}}})
	f.delay = 25 * time.Millisecond // each tick takes 2.5 periods
	ws := run(t, Config{Hz: 100}, 600*time.Millisecond, f)
	st := ws[0].Stats
	if st.MissedTicks == 0 || ws[0].Missed[profile.MissTickLate] != st.MissedTicks {
		t.Fatalf("missed ticks %d (%v), want some", st.MissedTicks, ws[0].Missed)
	}
	if st.Ticks > 30 {
		t.Fatalf("%d ticks in 600 ms with 25 ms per tick: ticks were bunched", st.Ticks)
	}
	// The CPU time of the missed ticks is still counted.
	if n := countBy(ws[0])[1]; n < 45 {
		t.Errorf("%d samples for 600 ms of CPU at 100 Hz, want about 60", n)
	}
}

func TestEvictedStacksStayInTheWindow(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1, 2}, stacks: 50}})
	ws := run(t, Config{Hz: 200, MaxStacks: 4}, 500*time.Millisecond, f)
	w := ws[0]
	var total int64
	for _, s := range w.Samples {
		total += s.Count
		if s.Stack < 0 || s.Stack >= len(w.Stacks) || len(w.Stacks[s.Stack].PCs) != 3 {
			t.Fatalf("sample points at a bad stack: %+v", s)
		}
	}
	if total < 80 || len(w.Stacks) < 40 || w.Missed[profile.MissStackEvicted] != 0 {
		t.Fatalf("%d samples over %d stacks, missed %v: evicted stacks were lost", total, len(w.Stacks), w.Missed)
	}
}

func TestWindowsExitAndKeepRunning(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1}}})
	f.exitAt = time.Now().Add(300 * time.Millisecond)
	var exited []int
	ws := run(t, Config{Hz: 100, Window: 100 * time.Millisecond, KeepRunning: true,
		OnExit: func(tg target.Target) { exited = append(exited, tg.PID()) }}, 700*time.Millisecond, f)
	if len(ws) < 5 {
		t.Fatalf("%d windows in 700 ms of 100 ms windows", len(ws))
	}
	if len(exited) != 1 || exited[0] != 10 {
		t.Fatalf("OnExit calls %v, want [10]", exited)
	}
	last := ws[len(ws)-1]
	if len(last.Processes) != 0 || len(last.Samples) != 0 {
		t.Fatalf("the exited target is still in later windows: %+v", last.Processes)
	}

	// Without KeepRunning, Run ends when every target has exited.
	f2 := newFake(11, map[target.ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1}}})
	f2.exitAt = time.Now().Add(200 * time.Millisecond)
	s, _ := New(Config{Hz: 100})
	s.Add(f2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Run(ctx); !errors.Is(err, ErrAllExited) || time.Since(start) > 2*time.Second {
		t.Fatalf("Run = %v after %v, want ErrAllExited soon after the exit", err, time.Since(start))
	}
}

func TestSamplerHotPathDoesNotAllocate(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1, 2, 3}}, 2: {share: 1, stack: []uint64{4, 5}}})
	s := tickable(t, Config{Hz: 1000}, f)
	tick := int64(0)
	for i := 0; i < 10; i++ { // warm up: threads, buffers, map entries
		tick++
		time.Sleep(2 * time.Millisecond)
		s.tick(tick)
	}
	allocs := testing.AllocsPerRun(50, func() {
		tick++
		f.start = f.start.Add(-2 * time.Millisecond) // 2 periods of CPU per tick
		s.tick(tick)
	})
	if allocs != 0 {
		t.Fatalf("a tick allocates %.1f times", allocs)
	}
}

// walkingTarget captures like a backend does: it lays its thread's stack
// out as frame records in memory and walks them with an unwind.Walker, so
// that Capture.Walk carries the walk's hash.
type walkingTarget struct {
	*fakeTarget
	walker *unwind.Walker
}

func (w *walkingTarget) Capture(tid target.ThreadID, c *target.Capture) error {
	pcs := w.threads[tid].stack
	const base = 0x7ff0_0000_0000
	mem := make([]byte, 64+16*len(pcs))
	fp := uint64(base + 64)
	for i, ret := range pcs[1:] {
		next := fp + 16
		if i == len(pcs)-2 {
			next = 0
		}
		binary.LittleEndian.PutUint64(mem[fp-base:], next)
		binary.LittleEndian.PutUint64(mem[fp-base+8:], ret)
		fp = next
	}
	st := unwind.Stack{Base: base, Data: mem, Lo: base, Hi: base + uint64(len(mem))}
	c.PCs, c.Walk = w.walker.Walk(unwind.Regs{PC: pcs[0], SP: base, FP: base + 64}, &st, c.PCs)
	return nil
}

// captureOnce runs captureBatch for the given threads of ts and returns
// the stack each was interned as.
func captureOnce(s *Sampler, ts *targetState, tids ...target.ThreadID) []intern.StackID {
	s.batchIDs, s.batchN, s.batchState = s.batchIDs[:0], s.batchN[:0], s.batchState[:0]
	for _, tid := range tids {
		th := &threadState{}
		ts.threads[tid] = th
		s.batchIDs = append(s.batchIDs, tid)
		s.batchN = append(s.batchN, 1)
		s.batchState = append(s.batchState, th)
	}
	s.captureBatch(ts)
	ids := make([]intern.StackID, len(tids))
	for i, th := range s.batchState {
		ids[i] = th.lastStack
	}
	return ids
}

// TestCaptureBatchInterns: stacks captured by a backend that walks (with
// the walk's hash) and by one that fills PCs only (hashed by the sampler)
// are interned alike: one ID for one stack, whichever backend captured
// it, in whichever order, through the same reused Capture buffers.
func TestCaptureBatchInterns(t *testing.T) {
	a := []uint64{0x401000, 0x402000, 0x403000, 0x404000}
	b := []uint64{0x401000, 0x402000, 0x403000, 0x404004}
	c := []uint64{0x401000, 0x402000, 0x403000}
	walker, err := unwind.NewWalker(unwind.Config{Arch: unwind.ArchAMD64})
	if err != nil {
		t.Fatal(err)
	}
	threads := map[target.ThreadID]*fakeThread{1: {stack: a}, 2: {stack: a}, 3: {stack: b}, 4: {stack: c}}
	walking := &walkingTarget{fakeTarget: newFake(10, threads), walker: walker}
	plain := newFake(11, map[target.ThreadID]*fakeThread{1: {stack: b}, 2: {stack: a}, 3: {stack: c}})
	s := tickable(t, Config{Hz: 100}, walking, plain)
	tw, tp := s.targets[0], s.targets[1]

	w1 := captureOnce(s, tw, 1, 2, 3)
	if s.batchCaps[0].Walk.Hash == 0 || s.batchCaps[0].Walk.Hash != unwind.HashPCs(a) {
		t.Fatalf("walked capture has hash %#x, want %#x", s.batchCaps[0].Walk.Hash, unwind.HashPCs(a))
	}
	// The same buffers, now filled without a walk: no hash of the walk
	// before may stay behind.
	p1 := captureOnce(s, tp, 1, 2, 3)
	if s.batchCaps[0].Walk.Hash != 0 {
		t.Fatalf("unwalked capture kept hash %#x", s.batchCaps[0].Walk.Hash)
	}
	w2 := captureOnce(s, tw, 4, 3, 1)
	idA, idB, idC := w1[0], w1[2], w2[0]
	if idA == 0 || idB == 0 || idC == 0 || idA == idB || idA == idC || idB == idC {
		t.Fatalf("stacks a, b, c interned as %d, %d, %d", idA, idB, idC)
	}
	for _, c := range []struct {
		name      string
		got, want intern.StackID
	}{
		{"a, walked again", w1[1], idA},
		{"b, not walked", p1[0], idB},
		{"a, not walked", p1[1], idA},
		{"c, not walked", p1[2], idC},
		{"b, walked after the unwalked capture", w2[1], idB},
		{"a, walked a third time", w2[2], idA},
	} {
		if c.got != c.want {
			t.Errorf("%s: id %d, want %d", c.name, c.got, c.want)
		}
	}
	if st := s.interns.Stats(); st.Misses != 3 || st.Hits != 6 || st.Collisions != 0 {
		t.Errorf("interner stats %+v, want 3 misses and 6 hits", st)
	}
	for id, want := range map[intern.StackID][]uint64{idA: a, idB: b, idC: c} {
		if pcs, _, ok := s.interns.Lookup(id); !ok || !slices.Equal(pcs, want) {
			t.Errorf("Lookup(%d) = %#x, want %#x", id, pcs, want)
		}
	}
}

func TestTimerDelayWakesTheRuntimeOncePerTick(t *testing.T) {
	for d := time.Duration(0); d < 25*time.Millisecond; d += 7 * time.Microsecond {
		got := timerDelay(d)
		if runtime.GOOS != "linux" || d < time.Millisecond+netpollSlop {
			if got != d {
				t.Fatalf("timerDelay(%v) = %v, want it unchanged", d, got)
			}
			continue
		}
		// Never late, less than a millisecond early, and whole
		// milliseconds (epoll's unit) plus the slop.
		if got > d || d-got >= time.Millisecond {
			t.Fatalf("timerDelay(%v) = %v: not within the millisecond before the deadline", d, got)
		}
		if (got-netpollSlop)%time.Millisecond != 0 {
			t.Fatalf("timerDelay(%v) = %v: not whole milliseconds plus %v", d, got, netpollSlop)
		}
	}
}

func TestCPUModeCountsTimeWithoutANewKernelSampleOnTheLastStack(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*fakeThread{
		1: {share: 1, stack: []uint64{1, 2, 3}, noSampleEvery: 3},
	})
	ws := run(t, Config{Hz: 100}, time.Second, f)
	w := ws[0]
	// Every third capture finds no new sample: the first (no stack yet)
	// is missed; the others count on the stack captured before.
	if c := countBy(w)[1]; c < 85 || c > 100 {
		t.Errorf("busy thread: %d samples, want about 99 (all but the first tick's)", c)
	}
	if n := w.Missed[profile.MissNoKernelSample]; n != 1 {
		t.Errorf("missed for want of a sample: %d, want 1 (the first capture); missed %v", n, w.Missed)
	}
}

func TestAddStartedCountsCPUTimeFromTheProcessStart(t *testing.T) {
	for _, started := range []bool{false, true} {
		f := newFake(10, map[target.ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1, 2}}})
		f.start = f.start.Add(-300 * time.Millisecond) // it has run for 300 ms already
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
		for _, n := range s.win.counts {
			total += n
		}
		// Started during sampling: its 300 ms so far are counted at
		// first sight (30 samples); added while running: none of them.
		if want := map[bool]int64{false: 0, true: 30}[started]; total < want || total > want+1 {
			t.Errorf("started %v: %d samples at first sight, want %d", started, total, want)
		}
	}
}
