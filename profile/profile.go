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
}

// UnsampledFrame is the name exporters give the one frame of an Unsampled
// stack.
const UnsampledFrame = "[unsampled]"

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
	var n int64
	for _, s := range w.Samples {
		if s.Stack >= 0 && s.Stack < len(w.Stacks) && w.Stacks[s.Stack].Unsampled {
			n += s.Count
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
