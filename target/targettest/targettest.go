// Package targettest provides Fake, one configurable target.Target for
// the tests of the packages above the backends (sampler, record, agent,
// snapshot), so that they share one fake instead of a copy each.
package targettest

import (
	"errors"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// Thread is a thread of a Fake.
type Thread struct {
	// Name is what Info reports.
	Name string
	// Share is the fraction of a CPU the thread uses from the Fake's
	// Start: Info's CPUTime follows the wall clock at that rate.
	Share float64
	// Running is what Info reports; a thread with a Share runs.
	Running bool
	// InfoErr, when set, is Info's answer.
	InfoErr error
	// Stack is the PCs every capture gives. With Stacks > 0 a capture
	// appends one of Stacks PCs more, cycling, so that the captures
	// spread over that many distinct stacks.
	Stack  []uint64
	Stacks int
	// NoSampleEvery, when > 0, makes the thread's first capture and
	// every NoSampleEvery-th after it fail with target.ErrNoSample, as a
	// kernel sample not taken yet.
	NoSampleEvery int
	// CFI marks its walks as using unwind tables (Capture.Walk.CFIFrames).
	CFI bool
}

// Fake is a process whose threads are given. It implements
// target.Target, target.Launched, target.Snapshotter,
// target.ExitReporter and target.MemoryReader (whose memory is all
// unreadable). Its exported fields are set before it is used, Start
// aside, which a test may move back between two ticks of the sampler.
type Fake struct {
	// Start is when the threads' CPU time starts to count: New sets it
	// to the time of the call.
	Start time.Time
	// Delay is how long each Capture takes.
	Delay time.Duration
	// Stopped is each capture's Capture.Stopped.
	Stopped time.Duration
	// ExitAt, when set, is when the process exits: Threads fails with
	// target.ErrExited from then on (as after Exit).
	ExitAt time.Time
	// Status is what Wait returns.
	Status int
	// Snapshot and SnapshotErr are CaptureAll's answer.
	Snapshot    []target.Capture
	SnapshotErr error
	// ImageSet is what Images returns (nil: an empty set).
	ImageSet *images.Set
	// CloseErr is what Close returns.
	CloseErr error

	pid     int
	ids     []target.ThreadID
	threads map[target.ThreadID]*Thread

	mu       sync.Mutex
	captures map[target.ThreadID]int
	n        uint64
	seen     map[target.ThreadID][2]time.Duration
	closes   int
	exited   bool
}

// New returns a Fake of process pid with the given threads, listed by
// Threads in the order of their IDs.
func New(pid int, threads map[target.ThreadID]*Thread) *Fake {
	f := &Fake{Start: time.Now(), pid: pid, threads: threads,
		captures: map[target.ThreadID]int{}, seen: map[target.ThreadID][2]time.Duration{}}
	for id := range threads {
		f.ids = append(f.ids, id)
	}
	slices.Sort(f.ids)
	return f
}

// OneThread returns a Fake of process pid with one running thread, whose
// ID is pid, named "worker", always in stack.
func OneThread(pid int, stack ...uint64) *Fake {
	return New(pid, map[target.ThreadID]*Thread{target.ThreadID(pid): {Name: "worker", Running: true, Stack: stack}})
}

// Exit makes the process exit now.
func (f *Fake) Exit() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exited = true
}

// Exited implements target.ExitReporter.
func (f *Fake) Exited() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exited || !f.ExitAt.IsZero() && time.Now().After(f.ExitAt)
}

// Closes returns how many times Close was called.
func (f *Fake) Closes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closes
}

// Captures returns how many times thread t was captured.
func (f *Fake) Captures(t target.ThreadID) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.captures[t]
}

// CPUSeen returns the CPU time thread t used between the first and the
// last time Info was asked about it: the time a sampler's count of it
// stands for (its time before first sight is not counted).
func (f *Fake) CPUSeen(t target.ThreadID) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.seen[t]
	return s[1] - s[0]
}

// LastCPU returns thread t's CPU time the last time Info was asked
// about it: the most any count of it can stand for.
func (f *Fake) LastCPU(t target.ThreadID) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[t][1]
}

// Thread returns thread t as given to New, or nil.
func (f *Fake) Thread(t target.ThreadID) *Thread { return f.threads[t] }

// IDs returns the threads' IDs in order, whether or not the process
// exited.
func (f *Fake) IDs() []target.ThreadID { return slices.Clone(f.ids) }

// CPU returns thread t's CPU time now.
func (f *Fake) CPU(t target.ThreadID) time.Duration {
	return time.Duration(float64(time.Since(f.Start)) * f.threads[t].Share)
}

// PID implements target.Target.
func (f *Fake) PID() int { return f.pid }

// Threads implements target.Target.
func (f *Fake) Threads(dst []target.ThreadID) ([]target.ThreadID, error) {
	if f.Exited() {
		return dst[:0], target.ErrExited
	}
	return append(dst[:0], f.ids...), nil
}

// Info implements target.Target, noting the CPU time it reports.
func (f *Fake) Info(t target.ThreadID) (target.ThreadInfo, error) {
	th := f.threads[t]
	if th == nil {
		return target.ThreadInfo{}, target.ErrNoThread
	}
	if th.InfoErr != nil {
		return target.ThreadInfo{}, th.InfoErr
	}
	cpu := f.CPU(t)
	f.mu.Lock()
	s, ok := f.seen[t]
	if !ok {
		s[0] = cpu
	}
	s[1] = cpu
	f.seen[t] = s
	f.mu.Unlock()
	return target.ThreadInfo{ID: t, Name: th.Name, CPUTime: cpu, Running: th.Running || th.Share > 0}, nil
}

// Capture implements target.Target.
func (f *Fake) Capture(t target.ThreadID, c *target.Capture) error {
	if f.Delay > 0 {
		time.Sleep(f.Delay)
	}
	th := f.threads[t]
	if th == nil {
		return target.ErrNoThread
	}
	f.mu.Lock()
	f.captures[t]++
	f.n++
	n, k := f.n, f.captures[t]
	f.mu.Unlock()
	if th.NoSampleEvery > 0 && (k-1)%th.NoSampleEvery == 0 {
		return target.ErrNoSample
	}
	c.PCs = append(c.PCs[:0], th.Stack...)
	if th.Stacks > 0 {
		c.PCs = append(c.PCs, 0x9000+n%uint64(th.Stacks))
	}
	c.Stopped = f.Stopped
	if th.CFI {
		c.Walk.CFIFrames = len(c.PCs) - 1
	}
	return nil
}

// CaptureAll implements target.Snapshotter with Snapshot and SnapshotErr.
func (f *Fake) CaptureAll(dst []target.Capture) ([]target.Capture, error) {
	return append(dst, f.Snapshot...), f.SnapshotErr
}

// Images implements target.Target.
func (f *Fake) Images() (*images.Set, error) {
	if f.ImageSet == nil {
		return images.NewSet(nil), nil
	}
	return f.ImageSet, nil
}

// Arch implements target.MemoryReader.
func (f *Fake) Arch() unwind.Arch { return unwind.ArchAMD64 }

// ReadMemory implements target.MemoryReader: no memory is readable.
func (f *Fake) ReadMemory(uint64, []byte) error { return errors.New("targettest: no memory") }

// Close implements target.Target, counting the calls.
func (f *Fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closes++
	return f.CloseErr
}

// Wait implements target.Launched with Status.
func (f *Fake) Wait() int { return f.Status }

// Signal implements target.Launched: there is no process to signal.
func (f *Fake) Signal(os.Signal) error { return nil }

var (
	_ target.Launched     = (*Fake)(nil)
	_ target.Snapshotter  = (*Fake)(nil)
	_ target.ExitReporter = (*Fake)(nil)
	_ target.MemoryReader = (*Fake)(nil)
)
