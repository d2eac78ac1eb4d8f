package target

import (
	"time"

	"github.com/macprof/macprof/unwind"
)

// Options configures a backend.
type Options struct {
	// MaxFrames bounds each walk (default unwind.DefaultMaxFrames).
	MaxFrames int
	// StackBytes bounds each bulk stack copy (default DefaultStackBytes);
	// frames beyond it are read one record at a time.
	StackBytes int
	// Continuous tells the backend that the target is sampled over time,
	// one thread at a time, rather than snapshotted: it should hold as
	// little as it can between captures, so that the target's signals are
	// not held up between samples.
	Continuous bool
	// Unattended tells the backend that nobody watches the profiler (an
	// agent): it should prefer the capture that cannot leave the target
	// stopped if the profiler dies, at some cost to the target (on
	// macOS, holding the whole task with task_suspend2 for each tick's
	// captures rather than one thread at a time with thread_suspend;
	// see docs/DARWIN.md).
	Unattended bool
	// Unwind selects how stacks are walked (default unwind.MethodAuto:
	// unwind tables where objects have them, frame pointers elsewhere).
	// Backends without unwind tables walk frame pointers whatever it says.
	Unwind unwind.Method
	// Kernel configures sampling from the kernel's own samples of threads,
	// which only the Linux backend takes; other backends ignore it.
	Kernel KernelSampling
}

// KernelSampling configures a backend that captures running threads from
// the kernel's own samples of them (Linux's perf events) rather than by
// stopping them; one struct, so that the options only that backend reads
// sit apart from those every backend reads.
type KernelSampling struct {
	// Period, when non-zero, asks a backend that can (Linux, continuous
	// mode) to capture a running thread from the kernel's own samples of
	// it, one every Period of its CPU time, instead of stopping it: set it
	// to the sampling period in cpu mode. Wall mode, which needs idle
	// threads' stacks too, leaves it zero.
	Period time.Duration
	// StackBytes is the largest stack copy a kernel sample takes, for
	// threads whose walks run past the smaller copies they start with (0:
	// DefaultKernelStackBytes; at most MaxKernelStackBytes, the
	// kernel's limit). A walk that still reaches the copy's end is marked
	// truncated.
	StackBytes int
	// MaxDrainInterval bounds the time between two drains of kernel
	// samples (zero: DefaultMaxDrainInterval): new threads and processes
	// are found at drains, and each drain wakes the profiler. The agent,
	// whose windows last seconds, sets a longer one than record.
	MaxDrainInterval time.Duration
	// SamplesWaiting, when set, is called from another goroutine when a
	// thread's kernel sample buffer is half full, so that it is drained
	// before it overflows (see sampler.Sampler.DrainSoon): a backend that
	// calls it may size a buffer by what its thread uses rather than by
	// the drain interval.
	SamplesWaiting func()
	// ProcessRings asks a backend that launches a command with kernel
	// samples to sample the whole process from its first instruction
	// through events it inherits (on Linux, one per CPU, as perf record
	// does), where one kind of sample serves all its code (frame
	// pointers throughout): no thread is then stopped or given a buffer
	// of its own. Backends that cannot ignore it.
	ProcessRings bool
}

// DefaultStackBytes is the default size of a bulk stack copy: enough for the
// deep stacks of most programs in one read.
const DefaultStackBytes = 64 << 10

// The largest stack copy of a kernel sample: by default, and the kernel's
// limit (a sample record's size is 16 bits; perf record --call-graph
// dwarf takes the same). The default is the limit: only threads whose
// walks run past their first copies get larger ones, and a frame read
// from the process after the sample is a guess where the thread has run
// on (a recursion going up and down); larger copies cost each sample
// their copying.
const (
	DefaultKernelStackBytes = MaxKernelStackBytes
	MaxKernelStackBytes     = 65528
)

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.MaxFrames == 0 {
		o.MaxFrames = unwind.DefaultMaxFrames
	}
	if o.StackBytes == 0 {
		o.StackBytes = DefaultStackBytes
	}
	if o.Kernel.StackBytes == 0 {
		o.Kernel.StackBytes = DefaultKernelStackBytes
	}
	return o
}

// DefaultMaxDrainInterval is the longest the sampler waits between drains
// of kernel samples unless Options sets another ceiling, so that new
// threads and processes are still found quickly at low rates.
const DefaultMaxDrainInterval = 100 * time.Millisecond

// DrainInterval returns how often a SampleDrainer whose buffers hold periods
// samples beyond their slack is drained at sampling period period: every
// periods periods, but at least every maxInterval (zero:
// DefaultMaxDrainInterval), and at most every period. Fewer wake-ups are
// the sampler's fixed cost; backends size the kernel's sample buffers to
// hold at least one interval's samples.
func DrainInterval(period, maxInterval time.Duration, periods int) time.Duration {
	if maxInterval <= 0 {
		maxInterval = DefaultMaxDrainInterval
	}
	return min(time.Duration(periods)*period, max(maxInterval, period))
}
