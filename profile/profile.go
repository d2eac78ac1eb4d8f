// Package profile is macprof's data model: a Window of sample counts per
// (process, thread, stack), with what exporters need to symbolize and label
// them. The sampler produces windows; exporters, record and the agent read
// them, and import this package rather than the sampler.
package profile

import (
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
)

// Mode selects what a sample means.
type Mode uint8

// Sampling modes.
const (
	// ModeCPU counts only threads that used CPU since the last tick.
	ModeCPU Mode = iota
	// ModeWall counts every thread on every tick; idle threads count their
	// last stack again.
	ModeWall
)

// String returns the mode's flag value.
func (m Mode) String() string {
	if m == ModeWall {
		return "wall"
	}
	return "cpu"
}

// Window is the profile of one period of time: counts per (stack, thread),
// with everything exporters need to symbolize and label them. Exporters
// receive it after the target's threads were resumed and may take their time.
type Window struct {
	Start, End time.Time
	// Period is the sampling interval: each count stands for one Period.
	Period time.Duration
	Mode   Mode
	// Processes lists the profiled processes with their images.
	Processes []Process
	// Stacks holds the unique stacks of the window; Samples point into it.
	Stacks []Stack
	// Samples holds one entry per (process, thread, stack).
	Samples []Sample
	// Missed counts ticks or threads that produced no sample, by reason.
	Missed map[MissReason]int64
	// Stats describes the profiler's own cost during the window.
	Stats Stats
	// Timeline, when the sampler was asked to keep one, lists the
	// samples in the order they were counted, each with its time, so
	// that a timeline view can show when each thread ran; nil otherwise.
	// TimelineDropped counts the samples left off it past its bound.
	Timeline        []TimedSample
	TimelineDropped int64
}

// TimedSample is Count periods of one (process, thread, stack) taken at
// Time (Unix nanoseconds: the kernel's time of the sample where the
// backend gives it, else the time of the tick that captured or drained it).
// The sample stands for the Count periods that ended then.
type TimedSample struct {
	Time   int64
	Sample int32 // index into Window.Samples
	Count  int32
}

// Process is one profiled process.
type Process struct {
	PID int
	// Executable is the path of the process's main executable.
	Executable string
	// Images are the images loaded when the window closed.
	Images *images.Set
	// Gen tells apart the image sets one process had in turn (before and
	// after an exec, a library mapped since): the samples of the same PID
	// and Gen are symbolized with these Images. 0 is the images the
	// process had when the window closed.
	Gen int
	// UID is the user id the process runs as, when HasUID is set (the
	// agent sets it): exporters label its profiles with it, so that a
	// process of one user is never taken for another's.
	UID    int
	HasUID bool
}

// Stack is an interned call stack: PCs[0] is the PC of the innermost frame,
// the rest are return addresses.
type Stack struct {
	PCs []uint64
	// Truncated marks a walk that ended early (see unwind.StopReason).
	Truncated bool
	// CFI marks a stack walked with unwind tables (DWARF CFI) for at
	// least one frame, rather than with frame pointers alone.
	CFI bool
	// Unsampled marks the stack, with no PCs, of CPU time that no stack
	// could be found for: threads never captured before they ended, or
	// the profile did, and threads no listing showed. Exporters show it
	// as one frame, UnsampledFrame.
	Unsampled bool
	// Lost, when set, marks the stack, with no PCs, of CPU time whose
	// samples were lost, and says why. Exporters show it as one frame,
	// Lost.Frame(), never on a stack of the program's.
	Lost LostReason
}

// UnsampledFrame is the name exporters give the one frame of an Unsampled
// stack.
const UnsampledFrame = "[unsampled]"

// LostReason says why CPU time has no sample of its own. Counting it apart
// keeps the totals equal to the CPU time used without making any of the
// program's stacks hotter than it was.
type LostReason uint8

// The reasons samples are lost.
const (
	// NotLost: a stack of the program's (or Unsampled).
	NotLost LostReason = iota
	// LostBufferFull: the kernel dropped the samples, as the buffer it
	// writes them into was full (PERF_RECORD_LOST): macprof drained it
	// too late (it was stopped, starved of CPU, or the buffer is small).
	LostBufferFull
	// LostNoSample: CPU time the kernel's samples do not account for: an
	// event reopened mid-period, a sample that could not be read, time
	// the kernel does not sample, or samples dropped where the kernel
	// tells no thread's loss (a buffer shared by the process).
	LostNoSample
	// NumLostReasons bounds the reasons, for tables indexed by them.
	NumLostReasons
)

var lostFrames = [NumLostReasons]string{
	NotLost:        "",
	LostBufferFull: "[lost: buffer full]",
	LostNoSample:   "[lost: no sample]",
}

var lostText = [NumLostReasons]string{
	NotLost:        "not lost",
	LostBufferFull: "the kernel's sample buffer was full (drained late: macprof stopped or starved of CPU, or the buffer small)",
	LostNoSample:   "CPU time the kernel took no sample of (an event reopened mid-period, an unreadable sample, or a loss the kernel tells no thread of)",
}

// Frame returns the name exporters give the one frame of a stack lost for
// r ("" for NotLost).
func (r LostReason) Frame() string {
	if r < NumLostReasons {
		return lostFrames[r]
	}
	return "[lost]"
}

// String says why, as people read it.
func (r LostReason) String() string {
	if r < NumLostReasons {
		return lostText[r]
	}
	return "unknown"
}

// Sample is how many times one thread was seen in one stack.
type Sample struct {
	Stack      int // index into Window.Stacks
	PID        int
	Gen        int // the Process of this PID and Gen holds its images
	Thread     target.ThreadID
	ThreadName string
	Count      int64
}

// Stats is the profiler's own overhead over a window.
type Stats struct {
	Ticks, MissedTicks int64
	Captures           int64
	// WallDue counts, in wall mode, the samples the window was due: one
	// for each thread listed at each tick, and for each tick skipped late
	// one for each thread the tick before it listed. Samples short of it
	// were missed (Missed says why).
	WallDue int64
	// StoppedP50, StoppedP99 and StoppedMax summarise how long target
	// threads were stopped per capture.
	StoppedP50, StoppedP99, StoppedMax time.Duration
	// StoppedTotal is the sum of all stop times.
	StoppedTotal time.Duration
	// ProfilerCPU is the CPU time the profiler process used.
	ProfilerCPU time.Duration
	// StopBuckets is the distribution of stop times: log-linear buckets
	// (about 6% wide) with their lower bound, empty ones left out, in
	// increasing order.
	StopBuckets []StopBucket
}

// StopBucket is one bucket of the stop-time distribution.
type StopBucket struct {
	Low   time.Duration
	Count int64
}

// UnsampledCount returns the sum of the counts of the window's samples on
// Unsampled stacks: CPU time that could not be attributed to a stack.
func (w *Window) UnsampledCount() int64 {
	return w.countOn(func(st *Stack) bool { return st.Unsampled })
}

// TruncatedCount returns the sum of the counts of the window's samples on
// Truncated stacks: samples whose callers could not all be walked.
func (w *Window) TruncatedCount() int64 {
	return w.countOn(func(st *Stack) bool { return st.Truncated })
}

// countOn returns the sum of the counts of the window's samples on stacks
// for which on is true.
func (w *Window) countOn(on func(*Stack) bool) int64 {
	var n int64
	for _, s := range w.Samples {
		if s.Stack >= 0 && s.Stack < len(w.Stacks) && on(&w.Stacks[s.Stack]) {
			n += s.Count
		}
	}
	return n
}

// LostCounts returns the sum of the counts of the window's samples on Lost
// stacks, by reason: CPU time whose samples were lost.
func (w *Window) LostCounts() [NumLostReasons]int64 {
	var n [NumLostReasons]int64
	for _, s := range w.Samples {
		if s.Stack >= 0 && s.Stack < len(w.Stacks) {
			if r := w.Stacks[s.Stack].Lost; r != NotLost && r < NumLostReasons {
				n[r] += s.Count
			}
		}
	}
	return n
}

// SampleCount returns the sum of the window's sample counts.
func (w *Window) SampleCount() int64 {
	var n int64
	for _, s := range w.Samples {
		n += s.Count
	}
	return n
}
