package sampler

import (
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

// renamingTicks ticks s n times, each with 2 periods of f's CPU time more,
// as TestSamplerHotPathDoesNotAllocate does.
func renamingTicks(s *Sampler, f *targettest.Fake, tick *int64, n int) {
	for i := 0; i < n; i++ {
		*tick++
		f.Start = f.Start.Add(-2 * time.Millisecond)
		s.tick(*tick)
	}
}

// closedWindow closes s's open window and returns it.
func closedWindow(s *Sampler) *profile.Window {
	var w *profile.Window
	s.cfg.OnWindow = func(cw *profile.Window) { w = cw }
	s.closeWindow(time.Now())
	return w
}

// TestSamplesKeepTheNameOfWhenTheyWereTaken: a thread that renames itself
// on one stack has its samples before the rename under the old name and
// those after under the new one, as perf report's comm splits them, and
// counting them allocates nothing once both names were counted.
func TestSamplesKeepTheNameOfWhenTheyWereTaken(t *testing.T) {
	for _, mode := range []profile.Mode{profile.ModeCPU, profile.ModeWall} {
		th := &targettest.Thread{Share: 1, Stack: []uint64{1, 2, 3}}
		f := newFake(10, map[target.ThreadID]*targettest.Thread{1: th})
		th.Name = "a"
		s := tickable(t, Config{Hz: 1000, Mode: mode}, f)
		tick := int64(0)
		renamingTicks(s, f, &tick, 20)
		th.Name = "a2"
		renamingTicks(s, f, &tick, 60)
		w := closedWindow(s)
		by := map[string]int64{}
		for _, smp := range w.Samples {
			if smp.Thread != 1 {
				t.Fatalf("%v: sample of thread %d, want 1", mode, smp.Thread)
			}
			by[smp.ThreadName] += smp.Count
		}
		// Each tick counts at least one sample (two periods of CPU time
		// in CPU mode): the split is by ticks, 20 then 60.
		if by["a"] < 20 || by["a2"] < 60 || by["a2"] < 2*by["a"] || len(by) != 2 {
			t.Errorf("%v: samples by thread name %v; want those of 20 ticks under a, of 60 under a2", mode, by)
		}

		// Steady state with a name that changes back and forth.
		s.win = s.newWindow(time.Now())
		for _, name := range []string{"a", "a2", "a"} {
			th.Name = name
			renamingTicks(s, f, &tick, 10)
		}
		allocs := testing.AllocsPerRun(50, func() {
			if tick%2 == 0 {
				th.Name = "a"
			} else {
				th.Name = "a2"
			}
			renamingTicks(s, f, &tick, 1)
		})
		if allocs != 0 {
			t.Errorf("%v: a tick of a thread renamed between ticks allocates %.1f times", mode, allocs)
		}
	}
}
