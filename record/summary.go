package record

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/sampler"
)

// statusLine shows progress on one terminal line.
type statusLine struct {
	w     io.Writer
	tty   bool
	quiet bool
	last  time.Time
	shown bool
}

func newStatusLine(w io.Writer, quiet bool) *statusLine {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &statusLine{w: w, tty: tty, quiet: quiet}
}

func (s *statusLine) update(p sampler.Progress) {
	if !s.tty || s.quiet || time.Since(s.last) < 250*time.Millisecond {
		return
	}
	s.last = time.Now()
	s.shown = true
	fmt.Fprintf(s.w, "\r\x1b[Krecording: %s, %d samples, %d threads in %d process(es) (Ctrl-C to stop)",
		p.Elapsed.Round(time.Second), p.Samples, p.Threads, p.Targets)
}

func (s *statusLine) done() {
	if s.shown {
		fmt.Fprint(s.w, "\r\x1b[K")
	}
}

// WriteSummary writes the run's summary: samples, rate, stacks, how long
// threads were stopped, the profiler's own CPU time, the share of CPU time
// not attributed to a stack, and what was missed.
// period is the sampling period.
func WriteSummary(out io.Writer, w *profile.Window, period time.Duration) {
	st := w.Stats
	fmt.Fprintf(out, "macprof: %d samples over %s at %d Hz, %d stacks, %d captures\n",
		w.SampleCount(), w.End.Sub(w.Start).Round(time.Millisecond), int(time.Second/period), len(w.Stacks), st.Captures)
	fmt.Fprintf(out, "macprof: threads stopped per capture: p50 %s, p99 %s, max %s; profiler CPU %s\n",
		st.StoppedP50.Round(time.Microsecond), st.StoppedP99.Round(time.Microsecond), st.StoppedMax.Round(time.Microsecond), st.ProfilerCPU.Round(time.Millisecond))
	writeUnattributed(out, w)
	writeTruncated(out, w)
	for _, k := range w.MissReasons() {
		fmt.Fprintf(out, "macprof: missed %d: %s\n", w.Missed[k], k)
	}
}

// unsampledWhy says what the [unsampled] share is.
const unsampledWhy = "threads that ended, or the recording did, before a capture"

// writeUnattributed gives the share of the profile's time that has no
// stack of the program's: [unsampled], and [lost] by reason. It is said
// even when small: these samples have no stack to show.
func writeUnattributed(out io.Writer, w *profile.Window) {
	held := "the CPU time"
	if w.Mode == profile.ModeWall {
		held = "the thread time"
	}
	all := w.SampleCount()
	unsampled, lost := w.UnsampledCount(), w.LostCounts()
	var lostAll int64
	for _, n := range lost {
		lostAll += n
	}
	pct := func(n int64) float64 { return 100 * float64(n) / float64(all) }
	if lostAll == 0 {
		if unsampled > 0 {
			fmt.Fprintf(out, "macprof: %.1f%% of %s (%d samples) could not be attributed to a stack, shown as %s: %s\n",
				pct(unsampled), held, unsampled, profile.UnsampledFrame, unsampledWhy)
		}
		return
	}
	n := unsampled + lostAll
	fmt.Fprintf(out, "macprof: %.1f%% of %s (%d samples) could not be attributed to a stack, in these parts:\n", pct(n), held, n)
	if unsampled > 0 {
		fmt.Fprintf(out, "macprof:   %.1f%% (%d samples) shown as %s: %s\n", pct(unsampled), unsampled, profile.UnsampledFrame, unsampledWhy)
	}
	for r, k := range lost {
		if k > 0 {
			fmt.Fprintf(out, "macprof:   %.1f%% (%d samples) shown as %s: %s\n", pct(k), k, profile.LostReason(r).Frame(), profile.LostReason(r))
		}
	}
}

// writeTruncated says what share of the samples have stacks cut short
// (under a [truncated] root), when it is 1% or more: their flame graph
// towers stand apart from their callers', and the user should know why.
func writeTruncated(out io.Writer, w *profile.Window) {
	n, all := w.TruncatedCount(), w.SampleCount()
	if all == 0 || 100*n < all {
		return
	}
	fmt.Fprintf(out, "macprof: %.1f%% of the samples (%d) have stacks cut short, under [truncated]: their callers could not be walked "+
		"(code without frame pointers or unwind tables; a static Go command's children are walked by frame pointers alone: --unwind cfi walks them with their tables)\n",
		100*float64(n)/float64(all), n)
}
