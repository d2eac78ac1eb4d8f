package profile

import (
	"errors"
	"slices"
	"strings"

	"github.com/macprof/macprof/target"
)

// MissReason says why a tick or a thread produced no sample. Reasons are a
// closed set so that windows merge and export them by value, not by text.
type MissReason uint8

// The reasons a sample is missed.
const (
	// MissThreadGone: the thread exited, or could not be captured for a
	// reason no other MissReason names.
	MissThreadGone MissReason = iota
	// MissTickLate: the profiler fell behind and skipped whole ticks: its
	// own work took too long, or the CPUs were busy and it ran late.
	MissTickLate
	// MissStopTimeout: the thread did not stop in time.
	MissStopTimeout
	// MissThreadBlocked: the thread was in uninterruptible sleep.
	MissThreadBlocked
	// MissNoKernelSample: the kernel had no new sample of the thread.
	MissNoKernelSample
	// MissEmptyStack: the capture's walk found no frame.
	MissEmptyStack
	// MissStackEvicted: the interner evicted a counted stack before its
	// window closed, and no copy of it was kept.
	MissStackEvicted
	numMissReasons
)

var missText = [numMissReasons]string{
	MissThreadGone:     "thread gone before capture",
	MissTickLate:       "tick late (the profiler ran late: busy, or not scheduled)",
	MissStopTimeout:    "thread did not stop in time",
	MissThreadBlocked:  "thread in uninterruptible sleep",
	MissNoKernelSample: "no kernel sample yet",
	MissEmptyStack:     "empty stack",
	MissStackEvicted:   "stack evicted before the window closed",
}

var missID = [numMissReasons]string{
	MissThreadGone:     "thread_gone",
	MissTickLate:       "tick_late",
	MissStopTimeout:    "stop_timeout",
	MissThreadBlocked:  "thread_blocked",
	MissNoKernelSample: "no_kernel_sample",
	MissEmptyStack:     "empty_stack",
	MissStackEvicted:   "stack_evicted",
}

// ID returns the reason as an identifier, for attribute values that
// machines group by ("stop_timeout").
func (r MissReason) ID() string {
	if r < numMissReasons {
		return missID[r]
	}
	return "unknown"
}

// String returns the reason as people read it.
func (r MissReason) String() string {
	if r < numMissReasons {
		return missText[r]
	}
	return "unknown"
}

// MissReasonOf classifies a capture error.
func MissReasonOf(err error) MissReason {
	switch {
	case errors.Is(err, target.ErrThreadBlocked):
		return MissThreadBlocked
	case errors.Is(err, target.ErrStopTimeout):
		return MissStopTimeout
	case errors.Is(err, target.ErrNoSample):
		return MissNoKernelSample
	}
	return MissThreadGone
}

// MissReasons returns the reasons w missed samples for (a count above
// zero), in the order of their text, so that outputs are stable.
func (w *Window) MissReasons() []MissReason {
	out := make([]MissReason, 0, len(w.Missed))
	for r, n := range w.Missed {
		if n > 0 {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b MissReason) int { return strings.Compare(a.String(), b.String()) })
	return out
}
