package sampler

import (
	"fmt"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// TestTimelineKeepsEachSamplesTimeAndThread: with Config.Timeline, the
// window lists every sample in the order counted, with the kernel's time
// where the capture has one and the tick's otherwise, pointing at the
// sample of its thread and stack, spooled or not; past the bound samples
// are counted as dropped.
func TestTimelineKeepsEachSamplesTimeAndThread(t *testing.T) {
	for _, spool := range []int{0, 1 << 20} {
		t.Run(fmt.Sprint("spool=", spool), func(t *testing.T) {
			var got *profile.Window
			s, err := New(Config{Hz: 100, SpoolBytes: spool, Timeline: 5, OnWindow: func(w *profile.Window) { got = w }})
			if err != nil {
				t.Fatal(err)
			}
			base := time.Unix(1000, 0)
			s.win = s.newWindow(base)
			a, b := &threadState{name: "a"}, &threadState{name: "b"}
			capture := func(at time.Time, pcs ...uint64) *target.Capture {
				c := target.NewCapture(8, 0)
				c.PCs = append(c.PCs, pcs...)
				c.Walk.Hash = unwind.HashPCs(c.PCs)
				c.Time = at
				return c
			}
			s.now = base.Add(50 * time.Millisecond).UnixNano()
			s.internAndCount(1, 11, a, capture(base.Add(10*time.Millisecond), 1, 2), 1) // kernel time
			s.internAndCount(1, 12, b, capture(time.Time{}, 3), 1)                      // the tick's
			s.internAndCount(1, 11, a, capture(base.Add(20*time.Millisecond), 4), 1)
			s.count(1, 11, a, a.lastStack, 2) // its last stack again, at the tick
			s.internAndCount(1, 11, a, capture(base.Add(30*time.Millisecond), 1, 2), 1)
			s.internAndCount(1, 12, b, capture(base.Add(40*time.Millisecond), 3), 1) // past the bound
			s.closeWindow(base.Add(time.Second))
			if got == nil {
				t.Fatal("no window")
			}
			type entry struct {
				ms     int64
				tid    target.ThreadID
				pcs    string
				thread string
				n      int32
			}
			var es []entry
			for _, e := range got.Timeline {
				smp := got.Samples[e.Sample]
				es = append(es, entry{(e.Time - base.UnixNano()) / 1e6, smp.Thread, fmt.Sprint(got.Stacks[smp.Stack].PCs), smp.ThreadName, e.Count})
			}
			want := []entry{{10, 11, "[1 2]", "a", 1}, {50, 12, "[3]", "b", 1}, {20, 11, "[4]", "a", 1}, {50, 11, "[4]", "a", 2}, {30, 11, "[1 2]", "a", 1}}
			if fmt.Sprint(es) != fmt.Sprint(want) {
				t.Errorf("timeline\n got %v\nwant %v", es, want)
			}
			if got.TimelineDropped != 1 {
				t.Errorf("%d samples dropped past the bound, want 1", got.TimelineDropped)
			}
			if err := got.CheckValid(); err != nil {
				t.Error(err)
			}
		})
	}
}
