package sampler

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
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
	// cfi: its walks used unwind tables (Capture.Walk.CFIFrames).
	cfi bool
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
	// seen is the CPU time Info reported of each thread, the first time
	// and the last: what a test expects counted is what happened between
	// them, however late a loaded machine made the sampler's ticks.
	seen map[target.ThreadID][2]time.Duration
}

func newFake(pid int, threads map[target.ThreadID]*fakeThread) *fakeTarget {
	return &fakeTarget{pid: pid, start: time.Now(), threads: threads, captures: map[target.ThreadID]int{},
		seen: map[target.ThreadID][2]time.Duration{}}
}

// cpuSeen returns the CPU time a thread used between the first and the
// last time Info was asked about it: the time the sampler's count of it
// stands for (its time before first sight is not counted).
func (f *fakeTarget) cpuSeen(t target.ThreadID) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.seen[t]
	return s[1] - s[0]
}

// lastCPU returns the CPU time of a thread the last time Info was asked
// about it: the most any count of it can stand for.
func (f *fakeTarget) lastCPU(t target.ThreadID) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[t][1]
}

// samplesFor returns how many samples of one period each d stands for.
func samplesFor(d, period time.Duration) int64 { return int64(d / period) }

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
	f.mu.Lock()
	s, ok := f.seen[t]
	if !ok {
		s[0] = cpu
	}
	s[1] = cpu
	f.seen[t] = s
	f.mu.Unlock()
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
	if th.cfi {
		c.Walk.CFIFrames = len(c.PCs) - 1
	}
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

// runWindows runs the Sampler until stop, asked after each window, says
// so (or limit passes, a failure), and returns the windows and, for each,
// how long this process's threads waited for a CPU while it was open
// (schedWait): a window a loaded machine made longer by making the tick
// that closed it late is longer by at most that.
func runWindows(t *testing.T, cfg Config, limit time.Duration, stop func(ws []*profile.Window) bool, targets ...target.Target) ([]*profile.Window, []time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var ws []*profile.Window
	var waits []time.Duration
	last := schedWait()
	cfg.OnWindow = func(w *profile.Window) {
		now := schedWait()
		ws, waits = append(ws, w), append(waits, max(0, now-last))
		last = now
		if stop(ws) {
			cancel()
		}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		s.Add(tg)
	}
	if err := s.Run(ctx); err != nil {
		t.Fatalf("Run = %v after %d windows, want it to run until cancelled", err, len(ws))
	}
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("%d windows in %v, and the run was not stopped", len(ws), limit)
	}
	return ws, waits
}

// checkWindowLengths checks that the windows of a run follow one another
// and that each but the last (cut short by the run's end) lasted at least
// window and at most window+slack, plus how long this process waited for a
// CPU while it was open.
func checkWindowLengths(t *testing.T, ws []*profile.Window, waits []time.Duration, window, slack time.Duration) {
	t.Helper()
	for i, w := range ws {
		if i > 0 && !w.Start.Equal(ws[i-1].End) {
			t.Errorf("window %d starts at %v, %v after the previous one ended", i, w.Start, w.Start.Sub(ws[i-1].End))
		}
		if i == len(ws)-1 {
			break
		}
		l := w.End.Sub(w.Start)
		if l < window || l > window+slack+waits[i] {
			t.Errorf("window %d of %v, want %v to %v (%v plus %v of slack and the %v this process waited for a CPU)",
				i, l, window, window+slack+waits[i], window, slack, waits[i])
		}
	}
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
