package sampler

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/unwind"
)

// fakeThread uses share of a CPU from the moment the fake target starts.
type fakeThread struct {
	share float64
	stack []uint64
	// stacks, when set, cycles through distinct stacks capture by capture.
	stacks int
}

// fakeTarget is a Target whose threads' CPU time follows the wall clock.
type fakeTarget struct {
	mu       sync.Mutex
	pid      int
	start    time.Time
	threads  map[ThreadID]*fakeThread
	captures map[ThreadID]int
	delay    time.Duration // how long each capture takes
	exitAt   time.Time
	n        uint64
}

func newFake(pid int, threads map[ThreadID]*fakeThread) *fakeTarget {
	return &fakeTarget{pid: pid, start: time.Now(), threads: threads, captures: map[ThreadID]int{}}
}

func (f *fakeTarget) exited() bool { return !f.exitAt.IsZero() && time.Now().After(f.exitAt) }

func (f *fakeTarget) PID() int          { return f.pid }
func (f *fakeTarget) Arch() unwind.Arch { return unwind.ArchAMD64 }
func (f *fakeTarget) Threads(dst []ThreadID) ([]ThreadID, error) {
	dst = dst[:0]
	if f.exited() {
		return dst, errors.New("exited")
	}
	for id := ThreadID(1); int(id) <= len(f.threads); id++ {
		dst = append(dst, id)
	}
	return dst, nil
}
func (f *fakeTarget) Info(t ThreadID) (ThreadInfo, error) {
	th := f.threads[t]
	cpu := time.Duration(float64(time.Since(f.start)) * th.share)
	return ThreadInfo{ID: t, Name: "worker", CPUTime: cpu, Running: th.share > 0}, nil
}
func (f *fakeTarget) Capture(t ThreadID, c *Capture) error {
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	f.mu.Lock()
	f.captures[t]++
	f.n++
	n := f.n
	f.mu.Unlock()
	th := f.threads[t]
	c.PCs = append(c.PCs[:0], th.stack...)
	if th.stacks > 0 {
		c.PCs = append(c.PCs, 0x9000+n%uint64(th.stacks))
	}
	c.Stopped = 10 * time.Microsecond
	return nil
}
func (f *fakeTarget) CaptureAll(dst []Capture) ([]Capture, error) { return dst, nil }
func (f *fakeTarget) Images() (*images.Set, error)                { return images.NewSet(nil), nil }
func (f *fakeTarget) ReadMemory(uint64, []byte) error             { return errors.New("no memory") }
func (f *fakeTarget) Close() error                                { return nil }

func run(t *testing.T, cfg Config, d time.Duration, targets ...Target) []*Window {
	t.Helper()
	var ws []*Window
	cfg.OnWindow = func(w *Window) { ws = append(ws, w) }
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

func countBy(w *Window) map[ThreadID]int64 {
	m := map[ThreadID]int64{}
	for _, s := range w.Samples {
		m[s.Thread] += s.Count
	}
	return m
}

func TestCPUModeCountsCPUTime(t *testing.T) {
	f := newFake(10, map[ThreadID]*fakeThread{
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
	f := newFake(10, map[ThreadID]*fakeThread{
		1: {share: 1, stack: []uint64{1, 2, 3}},
		2: {share: 0, stack: []uint64{4, 5}},
	})
	ws := run(t, Config{Hz: 100, Mode: ModeWall}, 500*time.Millisecond, f)
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
	f := newFake(10, map[ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1}}})
	f.delay = 25 * time.Millisecond // each tick takes 2.5 periods
	ws := run(t, Config{Hz: 100}, 600*time.Millisecond, f)
	st := ws[0].Stats
	if st.MissedTicks == 0 || ws[0].Missed["tick late (profiler overloaded)"] != st.MissedTicks {
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
	f := newFake(10, map[ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1, 2}, stacks: 50}})
	ws := run(t, Config{Hz: 200, MaxStacks: 4}, 500*time.Millisecond, f)
	w := ws[0]
	var total int64
	for _, s := range w.Samples {
		total += s.Count
		if s.Stack < 0 || s.Stack >= len(w.Stacks) || len(w.Stacks[s.Stack].PCs) != 3 {
			t.Fatalf("sample points at a bad stack: %+v", s)
		}
	}
	if total < 80 || len(w.Stacks) < 40 || w.Missed["stack evicted before the window closed"] != 0 {
		t.Fatalf("%d samples over %d stacks, missed %v: evicted stacks were lost", total, len(w.Stacks), w.Missed)
	}
}

func TestWindowsExitAndKeepRunning(t *testing.T) {
	f := newFake(10, map[ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1}}})
	f.exitAt = time.Now().Add(300 * time.Millisecond)
	var exited []int
	ws := run(t, Config{Hz: 100, Window: 100 * time.Millisecond, KeepRunning: true,
		OnExit: func(tg Target) { exited = append(exited, tg.PID()) }}, 700*time.Millisecond, f)
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
	f2 := newFake(11, map[ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1}}})
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
	f := newFake(10, map[ThreadID]*fakeThread{1: {share: 1, stack: []uint64{1, 2, 3}}, 2: {share: 1, stack: []uint64{4, 5}}})
	s, err := New(Config{Hz: 1000})
	if err != nil {
		t.Fatal(err)
	}
	s.Add(f)
	s.adopt()
	s.win = s.newWindow(time.Now())
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
