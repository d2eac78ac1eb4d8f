// Package sampler runs the sampling loop: it asks a Target (an OS backend)
// to capture threads at a fixed rate, interns the stacks it gets back, and
// hands windows of counts to exporters. It makes no system calls itself.
package sampler

import (
	"errors"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/unwind"
)

// ThreadID identifies a thread within its target: the kernel thread id on
// Linux, the Mach thread id (THREAD_IDENTIFIER_INFO) on macOS.
type ThreadID uint64

// ThreadInfo describes a thread at the time it was asked about.
type ThreadInfo struct {
	ID   ThreadID
	Name string
	// CPUTime is the thread's total user+system CPU time so far.
	CPUTime time.Duration
	// Running reports whether the thread was runnable (not sleeping or
	// blocked) when asked or, where a backend cannot tell that cheaply
	// (ptrace), whether it used CPU since the previous Info call.
	Running bool
}

// Capture is one thread's registers and stack, captured while the thread
// was stopped. Its buffers are owned by the caller and reused between
// captures: a Target fills them without allocating.
type Capture struct {
	Thread ThreadID
	Regs   unwind.Regs
	// PCs receives the PC and return addresses; its capacity bounds the
	// walk. Callers size it with the walker's frame limit.
	PCs []uint64
	// Walk tells how the walk ended. Walk.Hash must be the hash of
	// exactly PCs, as unwind.Walker.Walk sets it, or 0 (no walk: the
	// sampler then hashes PCs itself; it clears Walk before each capture).
	Walk unwind.Result
	// Stack receives the bulk copy of the stack; its capacity bounds the
	// copy. StackBase is the address of Stack[0].
	Stack     []byte
	StackBase uint64
	// Stopped is how long the thread was stopped for this capture.
	Stopped time.Duration
	// Err is set by CaptureAll for a thread that could not be captured.
	Err error
}

// NewCapture returns a Capture with buffers for maxFrames frames and a
// stack copy of stackBytes bytes.
func NewCapture(maxFrames, stackBytes int) *Capture {
	return &Capture{PCs: make([]uint64, 0, maxFrames), Stack: make([]byte, 0, stackBytes)}
}

// Target is a process being profiled, as an OS backend exposes it.
// Implementations live in mach/ (darwin) and ptrace/ (Linux). Methods are not
// required to be safe for concurrent use; the sampler calls them from one
// goroutine.
type Target interface {
	// PID returns the process id.
	PID() int
	// Arch returns the architecture of the target's threads.
	Arch() unwind.Arch
	// Threads appends the target's current thread ids to dst[:0] (no
	// allocation when dst has room).
	Threads(dst []ThreadID) ([]ThreadID, error)
	// Info returns a thread's name, CPU time and state.
	Info(t ThreadID) (ThreadInfo, error)
	// Capture stops one thread, reads its registers, copies its stack in
	// bulk, walks it, resumes the thread, and reports how long it was
	// stopped. It does not allocate in steady state.
	Capture(t ThreadID, c *Capture) error
	// CaptureAll stops every thread, captures each into dst (grown as
	// needed), then resumes them all: a consistent snapshot. A thread that
	// could not be captured has its Err set; the error return is for a
	// target that could not be stopped at all.
	CaptureAll(dst []Capture) ([]Capture, error)
	// Images returns the loaded images. It is cheap when nothing was loaded
	// or unloaded since the last call, and returns the same *Set then.
	Images() (*images.Set, error)
	// ReadMemory reads the target's memory.
	ReadMemory(addr uint64, dst []byte) error
	// Close resumes every thread and detaches, whatever state the target is
	// in. It is safe to call more than once.
	Close() error
}

// TargetOptions configures a backend.
type TargetOptions struct {
	// MaxFrames bounds each walk (default unwind.DefaultMaxFrames).
	MaxFrames int
	// StackBytes bounds each bulk stack copy (default DefaultStackBytes);
	// frames beyond it are read one record at a time.
	StackBytes int
	// Continuous tells the backend that the target is sampled over time,
	// one thread at a time, rather than snapshotted: it should hold as
	// little as it can between captures. (The ptrace backend then attaches
	// to a thread only for the time of its capture, so that the target's
	// signals are not intercepted between samples.)
	Continuous bool
	// KernelSamplePeriod, when non-zero, asks a backend that can (Linux,
	// continuous mode) to capture a running thread from the newest sample
	// the kernel took of it, every KernelSamplePeriod of its CPU time,
	// instead of stopping it: set it to the sampling period in cpu mode.
	// A thread the kernel has not sampled since the previous capture is
	// reported with an error (a missed sample), so wall mode, which
	// captures idle threads too, should leave it zero.
	KernelSamplePeriod time.Duration
}

// DefaultStackBytes is the default size of a bulk stack copy: enough for the
// deep stacks of most programs in one read.
const DefaultStackBytes = 64 << 10

// WithDefaults returns o with zero fields set to their defaults.
func (o TargetOptions) WithDefaults() TargetOptions {
	if o.MaxFrames == 0 {
		o.MaxFrames = unwind.DefaultMaxFrames
	}
	if o.StackBytes == 0 {
		o.StackBytes = DefaultStackBytes
	}
	return o
}

// BatchCapturer is implemented by backends for which one call per tick is
// much cheaper than one call per thread (ptrace, where every call is a
// round trip to the tracer thread). CaptureBatch captures ids[i] into
// caps[i] one thread at a time and sets errs[i]; it does not allocate.
type BatchCapturer interface {
	CaptureBatch(ids []ThreadID, caps []*Capture, errs []error)
}

// SampleDrainer is implemented by backends that keep the kernel's own
// samples of threads (TargetOptions.KernelSamplePeriod): the kernel samples
// each thread on the clock of its CPU time and keeps the samples until they
// are read, so the sampler collects them (DrainSamples) rather than asking
// for one sample per period, and can wake far less often than the sampling
// rate (DrainInterval). Each drained sample stands for one period of the
// thread's CPU time.
type SampleDrainer interface {
	// KernelSampled reports whether kernel samples are on, and whether
	// every thread so far is sampled by the kernel (none had to be stopped
	// for its samples instead, which needs a tick every period).
	KernelSampled() (on, everyThread bool)
	// DrainSamples captures into caps[0], caps[1], ..., oldest first, the
	// kernel samples of thread id taken since the previous call, and
	// returns how many it captured; a return of len(caps) means more may
	// be left. A thread the kernel does not sample (yet) gets
	// ErrNotKernelSampled: the sampler then captures it with Capture or
	// CaptureBatch, which starts its kernel samples where it can. It does
	// not stop the thread and, in steady state, does not allocate.
	DrainSamples(id ThreadID, caps []*Capture) (int, error)
}

// Errors a backend returns from a capture for a thread it could not stop;
// the sampler counts each as a missed sample under its own reason.
var (
	// ErrStopTimeout reports a thread that did not stop in time.
	ErrStopTimeout = errors.New("thread did not stop in time")
	// ErrThreadBlocked reports a thread in uninterruptible sleep, which
	// is not stopped for a sample.
	ErrThreadBlocked = errors.New("thread in uninterruptible sleep")
	// ErrNoSample reports a thread the kernel has taken no sample of since
	// the previous capture (KernelSamplePeriod).
	ErrNoSample = errors.New("no kernel sample of the thread yet")
	// ErrNotKernelSampled reports, from DrainSamples, a thread that has
	// no kernel samples to drain: not sampled by the kernel yet, or
	// refused.
	ErrNotKernelSampled = errors.New("thread not sampled by the kernel")
)
