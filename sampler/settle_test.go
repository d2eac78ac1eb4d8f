package sampler

import (
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
)

// stepTarget is a target whose threads' CPU times the test sets between
// ticks. Each thread's stack is one PC, 0x1000 plus its id.
type stepTarget struct {
	cpu      map[target.ThreadID]time.Duration
	live     map[target.ThreadID]bool
	proc     time.Duration // CPU time of every thread it had, ended ones included
	failNext map[target.ThreadID]bool
	exited   bool
	captures int
}

func newStep(threads int) *stepTarget {
	f := &stepTarget{cpu: map[target.ThreadID]time.Duration{}, live: map[target.ThreadID]bool{}, failNext: map[target.ThreadID]bool{}}
	for i := 1; i <= threads; i++ {
		f.live[target.ThreadID(i)] = true
	}
	return f
}

// use adds d of CPU time to thread tid (listed or not).
func (f *stepTarget) use(tid target.ThreadID, d time.Duration) {
	f.cpu[tid] += d
	f.proc += d
}

func (f *stepTarget) PID() int { return 10 }
func (f *stepTarget) Threads(dst []target.ThreadID) ([]target.ThreadID, error) {
	dst = dst[:0]
	if f.exited {
		return dst, target.ErrExited
	}
	for tid, ok := range f.live {
		if ok {
			dst = append(dst, tid)
		}
	}
	slices.Sort(dst)
	return dst, nil
}
func (f *stepTarget) Info(tid target.ThreadID) (target.ThreadInfo, error) {
	if !f.live[tid] {
		return target.ThreadInfo{}, target.ErrNoThread
	}
	return target.ThreadInfo{ID: tid, CPUTime: f.cpu[tid]}, nil
}
func (f *stepTarget) Capture(tid target.ThreadID, c *target.Capture) error {
	f.captures++
	if f.failNext[tid] {
		f.failNext[tid] = false
		return target.ErrStopTimeout
	}
	c.PCs = append(c.PCs[:0], 0x1000+uint64(tid))
	return nil
}
func (f *stepTarget) Images() (*images.Set, error) { return images.NewSet(nil), nil }
func (f *stepTarget) Close() error                 { return nil }

// stepProc is a stepTarget that reports its process's CPU time.
type stepProc struct{ *stepTarget }

func (f stepProc) ProcessCPU() (time.Duration, error) { return f.proc, nil }

// stepKernel is a stepTarget with kernel samples on, none of whose threads
// has used enough CPU time to be sampled by the kernel.
type stepKernel struct{ *stepTarget }

func (f stepKernel) KernelSampled() (bool, bool)  { return true, true }
func (f stepKernel) DrainInterval() time.Duration { return target.DefaultMaxDrainInterval }
func (f stepKernel) DrainSamples(target.ThreadID, []*target.Capture) (int, error) {
	return 0, target.ErrNotKernelSampled
}

// closed closes s's window and returns it.
func closed(s *Sampler) *profile.Window {
	var w *profile.Window
	s.cfg.OnWindow = func(x *profile.Window) { w = x }
	s.closeWindow(time.Now())
	return w
}

// byStack returns w's counts by thread and stack, an Unsampled stack as 0.
func byStack(w *profile.Window) map[target.ThreadID]map[uint64]int64 {
	m := map[target.ThreadID]map[uint64]int64{}
	for _, s := range w.Samples {
		if m[s.Thread] == nil {
			m[s.Thread] = map[uint64]int64{}
		}
		var pc uint64
		if st := w.Stacks[s.Stack]; !st.Unsampled {
			pc = st.PCs[0]
		}
		m[s.Thread][pc] += s.Count
	}
	return m
}

// TestThreadsUnderAPeriodAreCounted: 1,000 threads that each run 50 µs a
// tick never use a whole period before the profile ends; their CPU time is
// counted all the same, as [unsampled] since none was ever captured, with
// and without kernel samples.
func TestThreadsUnderAPeriodAreCounted(t *testing.T) {
	for _, kernel := range []bool{false, true} {
		f := newStep(1000)
		var tg target.Target = f
		if kernel {
			tg = stepKernel{f}
		}
		s := tickable(t, Config{Hz: 100}, tg)
		s.tick(1)
		for n := int64(2); n <= 101; n++ {
			for tid := range f.live {
				f.use(tid, 50*time.Microsecond)
			}
			s.tick(n)
		}
		s.settleAll(s.targets[0])
		w := closed(s)
		// 1,000 threads × 100 ticks × 50 µs = 5 s: 500 periods.
		if got := w.SampleCount(); got < 499 || got > 501 || w.UnsampledCount() != got || f.captures != 0 {
			t.Errorf("kernel %v: %d samples (%d unsampled), %d captures; want 500 unsampled, no capture",
				kernel, got, w.UnsampledCount(), f.captures)
		}
	}
}

// TestThreadsThatExitAreCounted: a thread's CPU time left over from its
// last capture is counted on its last stack when it exits; one never
// captured is counted as [unsampled]; parts of a period carry from one
// thread to the next, so that the total is the CPU time to within half a
// period.
func TestThreadsThatExitAreCounted(t *testing.T) {
	f := newStep(3)
	s := tickable(t, Config{Hz: 100}, f)
	s.tick(1)
	f.use(1, 27*time.Millisecond) // 2 periods and 7 ms
	f.use(2, 9*time.Millisecond)
	f.use(3, 4*time.Millisecond)
	s.tick(2)
	f.live[1] = false
	s.tick(3)
	f.live[2], f.live[3] = false, false
	s.tick(4)
	got := byStack(closed(s))
	// Thread 1: 2 captured, 7 ms rounds to 1 (carry -3 ms); thread 2:
	// -3 + 9 ms rounds to 1 (carry -4 ms); thread 3: 0 ms, none.
	want := map[target.ThreadID]map[uint64]int64{1: {0x1001: 3}, 2: {0: 1}}
	if len(got) != len(want) || got[1][0x1001] != 3 || got[2][0] != 1 {
		t.Errorf("counts %v, want %v (40 ms of CPU: 4 samples)", got, want)
	}
}

// TestFailedCapturesKeepTheirCPUTime: the periods a capture failed to take
// are counted at the thread's next capture, not dropped.
func TestFailedCapturesKeepTheirCPUTime(t *testing.T) {
	f := newStep(1)
	s := tickable(t, Config{Hz: 100}, f)
	s.tick(1)
	f.use(1, 20*time.Millisecond)
	f.failNext[1] = true
	s.tick(2)
	f.use(1, 11*time.Millisecond)
	s.tick(3)
	w := closed(s)
	if got := byStack(w)[1][0x1001]; got != 3 || w.Missed[profile.MissStopTimeout] != 1 {
		t.Errorf("%d samples, missed %v; want 3 samples for 31 ms of CPU and the missed capture", got, w.Missed)
	}
}

// TestUnseenThreadsAreCountedAsUnsampled: CPU time a process used in
// threads that started and ended between two ticks, which no listing
// showed, is counted as [unsampled] when the target reports its process's
// CPU time.
func TestUnseenThreadsAreCountedAsUnsampled(t *testing.T) {
	f := newStep(1)
	f.use(1, time.Second) // before sampling: not counted
	s := tickable(t, Config{Hz: 100}, stepProc{f})
	s.tick(1)
	for n := int64(2); n <= 11; n++ {
		f.use(1, 10*time.Millisecond)
		f.use(target.ThreadID(1000+n), 30*time.Millisecond) // never listed
		s.tick(n)
	}
	s.settleAll(s.targets[0])
	got := byStack(closed(s))
	if got[1][0x1001] != 10 || got[unseenThread][0] != 30 || len(got) != 2 {
		t.Errorf("counts %v, want 10 samples of thread 1 and 30 unsampled of unseen threads", got)
	}
}

// TestCPUBeforeTheFirstTickIsCounted: the CPU time a running process uses
// between being added and the first tick that reads its threads is counted
// as [unsampled]; what it used before it was added is not.
func TestCPUBeforeTheFirstTickIsCounted(t *testing.T) {
	f := newStep(2)
	f.use(1, time.Second) // before it was added: not counted
	s := tickable(t, Config{Hz: 100}, stepProc{f})
	f.use(1, 200*time.Millisecond) // added, not yet read: counted
	f.use(2, 100*time.Millisecond)
	s.tick(1)
	for n := int64(2); n <= 11; n++ {
		f.use(1, 10*time.Millisecond)
		s.tick(n)
	}
	s.settleAll(s.targets[0])
	got := byStack(closed(s))
	if got[1][0x1001] != 10 || got[unseenThread][0] != 30 || len(got) != 2 {
		t.Errorf("counts %v, want 10 samples of thread 1 and 30 unsampled from before the first tick", got)
	}
}

// TestSettlingDoesNotAllocateInSteadyState: a tick of a target that
// reports its process's CPU time allocates nothing.
func TestSettlingDoesNotAllocateInSteadyState(t *testing.T) {
	f := newStep(4)
	s := tickable(t, Config{Hz: 100}, stepProc{f})
	tick := int64(0)
	step := func() {
		tick++
		for tid := range f.live {
			f.use(tid, 25*time.Millisecond)
		}
		f.use(99, 3*time.Millisecond)
		s.tick(tick)
	}
	for range 70 {
		step()
	}
	if allocs := testing.AllocsPerRun(50, step); allocs != 0 {
		t.Fatalf("a tick allocates %.1f times", allocs)
	}
}
