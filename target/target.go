// Package target is the contract between the sampler and the OS backends
// (ptrace/ on Linux, mach/ on darwin): the Target a backend returns, the
// optional capabilities it may add, and the errors every backend returns.
// It is modelled on database/sql/driver: Target holds only what the sampling
// loop calls, and each extra capability is a named interface that callers
// detect with a type assertion.
package target

import (
	"os"
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
	// Running reports whether the thread was runnable when asked or, where
	// a backend cannot tell that cheaply (ptrace), whether it used CPU or
	// waited on a run queue for one since the previous Info call.
	Running bool
	// PID is the process the thread belongs to when it is not the
	// target's own: a descendant whose samples the target's events
	// inherited (0: the target's).
	PID int
}

// Capture is one thread's registers, stack copy and walk. Its buffers are
// owned by the caller and reused between captures, so that a backend fills
// them without allocating.
type Capture struct {
	Thread ThreadID
	Regs   unwind.Regs
	// PCs receives the PC and return addresses; its capacity bounds the
	// walk.
	PCs []uint64
	// Walk tells how the walk ended. Walk.Hash is the hash of exactly PCs,
	// as unwind.Walker.Walk sets it, or 0 when the backend did not walk
	// (the sampler then hashes PCs itself).
	Walk unwind.Result
	// Stack receives the bulk copy of the stack; its capacity bounds the
	// copy. StackBase is the address of Stack[0]. A backend that walked
	// the stack where it lay (ptrace's DrainSamples, in the kernel's
	// ring) leaves Stack empty.
	Stack     []byte
	StackBase uint64
	// Stopped is how long the thread was stopped for this capture.
	Stopped time.Duration
	// Time is when the sample was taken, when the backend knows it (the
	// kernel's time of a sample drained later); zero: the sampler takes
	// the time of the tick that captured or drained it.
	Time time.Time
	// Err is set by Snapshotter.CaptureAll for a thread it could not
	// capture.
	Err error
	// PID is the process the sample was taken in when it is not the
	// target's own (a descendant whose samples the target's events
	// inherited); 0: the target's.
	PID int
	// Images, when set, are the images the sample's process had mapped
	// when it was taken (an exec or a new mapping since makes the
	// target's current images wrong for it); nil: the target's Images.
	// Executable is then the path of that process's executable.
	Images     *images.Set
	Executable string
	// ThreadName, when set, is the thread's name when the sample was
	// taken, as the backend's records of renames tell it (a sample drained
	// later may predate the name Info gives); "": Info's name.
	ThreadName string
}

// NewCapture returns a Capture with buffers for maxFrames frames and a
// stack copy of stackBytes bytes.
func NewCapture(maxFrames, stackBytes int) *Capture {
	return &Capture{PCs: make([]uint64, 0, maxFrames), Stack: make([]byte, 0, stackBytes)}
}

// Target is a process being profiled, with only what the sampling loop
// calls. Methods need not be safe for concurrent use: the sampler calls
// them from one goroutine.
type Target interface {
	// PID returns the process id.
	PID() int
	// Threads appends the target's current thread ids to dst[:0] (no
	// allocation when dst has room). With ErrExited it may still give
	// threads that left kernel samples to drain (SampleDrainer).
	Threads(dst []ThreadID) ([]ThreadID, error)
	// Info returns a thread's name, CPU time and state.
	Info(t ThreadID) (ThreadInfo, error)
	// Capture stops one thread, reads its registers, copies its stack in
	// bulk, walks it, resumes the thread, and reports how long it was
	// stopped. It does not allocate in steady state.
	Capture(t ThreadID, c *Capture) error
	// Images returns the loaded images. It is cheap when nothing was loaded
	// or unloaded since the last call, and returns the same *Set then.
	Images() (*images.Set, error)
	// Close resumes every thread and detaches, whatever state the target is
	// in. It is safe to call more than once.
	Close() error
}

// Snapshotter is implemented by backends that can stop every thread at
// once (snapshot): CaptureAll captures each thread into dst (grown as
// needed) and resumes them all, a consistent picture. A thread that could
// not be captured has its Err set; the error return is for a target that
// could not be stopped at all.
type Snapshotter interface {
	CaptureAll(dst []Capture) ([]Capture, error)
}

// UnwindPreparer is implemented by backends that unwind with tables they
// build lazily: PrepareUnwind builds the tables of every object the target
// has mapped now, waiting for them, so that a capture that holds threads
// stopped (a Snapshotter's) walks with them rather than with frame
// pointers. It may take tens of milliseconds a large object.
type UnwindPreparer interface {
	PrepareUnwind()
}

// CopyWalker is implemented by backends that unwind with tables they build
// lazily: WalkCopies walks Snapshotter captures again from their copies of
// the registers and stack, once the threads run again, building (and
// waiting for) the tables of the objects the walks meet, so that a
// snapshot stops threads only for the copy and builds only what its PCs
// need.
type CopyWalker interface {
	WalkCopies(caps []Capture)
}

// MemoryReader is implemented by backends that read a target's memory and
// know its threads' architecture (tests and tools that walk by hand).
type MemoryReader interface {
	Arch() unwind.Arch
	ReadMemory(addr uint64, dst []byte) error
}

// BatchCapturer is implemented by backends for which one call per tick is
// much cheaper than one call per thread. CaptureBatch captures ids[i] into
// caps[i] one thread at a time and sets errs[i]; it does not allocate.
type BatchCapturer interface {
	CaptureBatch(ids []ThreadID, caps []*Capture, errs []error)
}

// SampleDrainer is implemented by backends that keep the kernel's own
// samples of threads (Options.Kernel.Period). The kernel samples each
// thread on the clock of its CPU time and keeps the samples until they are
// read, so the sampler drains them every DrainInterval rather than asking
// for one sample per period. Each drained sample stands for one period of
// the thread's CPU time.
type SampleDrainer interface {
	// KernelSampled reports whether kernel samples are on, and whether
	// every thread so far is sampled by the kernel (none had to be stopped
	// instead, which needs a tick every period).
	KernelSampled() (on, everyThread bool)
	// DrainInterval returns how often the samples must be drained: the
	// backend's buffers hold that long's samples (see DrainInterval).
	DrainInterval() time.Duration
	// DrainSamples captures into caps[0], caps[1], ..., oldest first, the
	// kernel samples of thread id taken since the previous call, and
	// returns how many it captured; a return of len(caps) means more may
	// be left. A thread the kernel does not sample (yet) gets
	// ErrNotKernelSampled: the sampler then captures it with Capture or
	// CaptureBatch, which starts its kernel samples where it can. It does
	// not stop the thread and, in steady state, does not allocate.
	DrainSamples(id ThreadID, caps []*Capture) (int, error)
}

// SampleLossReporter is implemented by SampleDrainers that learn from the
// kernel how many of a thread's samples it dropped (its buffer was full),
// so that the sampler counts their CPU time as lost rather than on a stack.
type SampleLossReporter interface {
	// LostSamples returns how many samples of thread id the kernel
	// reported dropped in what DrainSamples read since the previous call.
	LostSamples(id ThreadID) int64
}

// ThreadWatcher is implemented by SampleDrainers that learn from the kernel
// when a thread of the process starts, ends, is renamed or maps code
// (ptrace: the records of its descendant rings), so that the sampler lists
// the threads less often while nothing changed.
type ThreadWatcher interface {
	// ThreadsUnchanged reports whether nothing of that kind happened
	// since the threads were last listed; false when it cannot tell.
	ThreadsUnchanged() bool
	// ImagesUnchanged reports the same whatever the threads' own
	// state: a listing now would find no code mapped since the last.
	ImagesUnchanged() bool
}

// SampleKeeper is implemented by SampleDrainers that can keep the kernel's
// samples in their own memory while the process runs (ptrace's process
// rings): Keep moves what the kernel's buffers hold there and reports
// whether the sampler may leave the target's threads unlisted and
// undrained this tick, as perf record leaves its parsing to perf report.
// It reports false once the process has exited, or when what it keeps is
// as much as it may keep: the sampler then lists and drains the threads as
// usual, which hands every kept sample out. The sampler asks once when it
// adds the target: a target that does not keep its samples then is never
// asked again.
type SampleKeeper interface {
	Keep() bool
}

// KernelSampleReporter is implemented by backends with kernel samples: it
// tells why they were refused (a thread was stopped instead) or reduced (a
// smaller ring than asked for), so that the user is told.
type KernelSampleReporter interface {
	KernelSampleError() error
	KernelSampleWarning() error
}

// Executabler is implemented by targets that know their main executable's
// path.
type Executabler interface {
	Executable() string
}

// ExitReporter is implemented by targets that notice their process's exit.
type ExitReporter interface {
	// Exited reports whether the process has exited.
	Exited() bool
}

// ProcessCPUReporter is implemented by targets that can read the CPU time
// their whole process used, ended threads included, so that the time of
// threads that lived and died between two ticks is counted too.
type ProcessCPUReporter interface {
	ProcessCPU() (time.Duration, error)
}

// DescendantSampler is implemented by targets whose kernel events every
// process the command starts inherits: their samples come with the
// target's (Capture.PID), so that a caller following the command's
// children must not sample them a second time.
type DescendantSampler interface {
	// SamplesDescendants reports whether the target's samples include
	// its descendants'.
	SamplesDescendants() bool
}

// ImageHitReporter is implemented by targets whose images' symbols can be
// read only while the process lives (darwin: from the task's memory, torn
// down at exit). ImagesHit appends the images that samples hit for the
// first time since the last call, so that their symbols are read at once.
type ImageHitReporter interface {
	ImagesHit(dst []*images.Image) []*images.Image
}

// Launched is a command a backend started and attached to.
type Launched interface {
	Target
	// Wait waits for the command to exit, unless it was reaped already,
	// and returns the status to forward: its exit code, or 128 plus the
	// signal that ended it.
	Wait() int
	// Signal sends sig to the command (an error once it was reaped), so
	// that a signal meant for a command reaches that process and no
	// other that reused its PID.
	Signal(sig os.Signal) error
}
