package sampler

import (
	"fmt"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
)

// TestCountsByImageSet: samples that come with their own images (before
// and after an exec) or their own process (a child sampled through the
// target's events) are counted apart under a Process of that PID and
// image set, even on the same addresses, and a thread's later samples on
// its last stack go with the images and process of that stack; with or
// without the spool.
func TestCountsByImageSet(t *testing.T) {
	for _, spoolBytes := range []int{0, 1 << 20} {
		var got *profile.Window
		s, err := New(Config{Hz: 100, SpoolBytes: spoolBytes, OnWindow: func(w *profile.Window) { got = w }})
		if err != nil {
			t.Fatal(err)
		}
		s.win = s.newWindow(time.Now())
		before := images.NewSet([]*images.Image{{Path: "/bin/old", Start: 0x400000, Limit: 0x500000}})
		after := images.NewSet([]*images.Image{{Path: "/bin/new", Start: 0x400000, Limit: 0x500000}})
		pcs := []uint64{0x401000, 0x402000}
		capture := func(pid int, set *images.Set, exe string) *target.Capture {
			c := target.NewCapture(8, 0)
			c.PCs = append(c.PCs, pcs...)
			c.PID, c.Images, c.Executable = pid, set, exe
			return c
		}
		main, child := &threadState{}, &threadState{}
		s.internAndCount(100, 100, main, capture(0, before, "/bin/old"), 2)
		s.internAndCount(100, 100, main, capture(0, after, "/bin/new"), 3)
		s.count(100, 100, main, main.lastStack, 1) // its last stack: after the exec
		s.internAndCount(100, 200, child, capture(200, before, "/bin/old"), 4)
		s.count(100, 200, child, child.lastStack, 5) // the child's, not the target's
		s.closeWindow(time.Now())

		gens := map[[2]int]profile.Process{}
		for _, p := range got.Processes {
			gens[[2]int{p.PID, p.Gen}] = p
		}
		counts := map[string]int64{}
		for _, smp := range got.Samples {
			p, ok := gens[[2]int{smp.PID, smp.Gen}]
			if !ok || smp.Gen == 0 {
				t.Fatalf("spool %d: sample %+v names no Process of its images", spoolBytes, smp)
			}
			if im := p.Images.Lookup(pcs[0]); im == nil || im.Path != p.Executable {
				t.Errorf("spool %d: sample %+v: its Process %+v does not hold its images", spoolBytes, smp, p)
			}
			counts[fmt.Sprintf("%s %d", p.Executable, smp.PID)] += smp.Count
		}
		want := map[string]int64{"/bin/old 100": 2, "/bin/new 100": 4, "/bin/old 200": 9}
		for k, n := range want {
			if counts[k] != n {
				t.Errorf("spool %d: %v, want %v", spoolBytes, counts, want)
				break
			}
		}
	}
}
