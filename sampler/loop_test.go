package sampler

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

func TestLateTicksAreMissedNotBunched(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1}}})
	f.Delay = 25 * time.Millisecond // each tick takes 2.5 periods
	begin := time.Now()
	ws := run(t, Config{Hz: 100}, 600*time.Millisecond, f)
	elapsed := time.Since(begin) // 600 ms, or more on a loaded machine
	st := ws[0].Stats
	if st.MissedTicks == 0 || ws[0].Missed[profile.MissTickLate] != st.MissedTicks {
		t.Fatalf("missed ticks %d (%v), want some", st.MissedTicks, ws[0].Missed)
	}
	if most := int64(elapsed / (20 * time.Millisecond)); st.Ticks > most {
		t.Fatalf("%d ticks in %v with 25 ms per tick, want at most %d: ticks were bunched", st.Ticks, elapsed, most)
	}
	// Each period's deadline is ticked or missed, once: bunched ticks
	// would count a late deadline as missed again at every tick. (The
	// last tick, at the run's end, is due at no deadline.)
	if most := int64(elapsed/(10*time.Millisecond)) + 2; st.Ticks+st.MissedTicks > most {
		t.Fatalf("%d ticks and %d missed in %v at 100 Hz, want at most %d in all: ticks were bunched", st.Ticks, st.MissedTicks, elapsed, most)
	}
	// The CPU time of the missed ticks is still counted: about 60 samples
	// for 600 ms, as many as the CPU time the fake reported from first
	// sight to the end.
	if n, want := countBy(ws[0])[1], samplesFor(f.CPUSeen(1), 10*time.Millisecond); n < want*75/100 {
		t.Errorf("%d samples for %v of CPU at 100 Hz, want about %d", n, f.CPUSeen(1), want)
	}
}

func TestWindowsExitAndKeepRunning(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1}}})
	f.ExitAt = time.Now().Add(300 * time.Millisecond)
	const window = 100 * time.Millisecond
	var exited []int
	// Windows that closed after OnExit was told of the exit.
	after := 0
	// Run until three windows closed after the exit: the run goes on
	// without targets, closing a window every 100 ms, until cancelled
	// (the 10 s limit fails the test).
	ws, waits := runWindows(t, Config{Hz: 100, Window: window, KeepRunning: true,
		OnExit: func(tg target.Target) { exited = append(exited, tg.PID()) }}, 10*time.Second,
		func([]*profile.Window) bool {
			if len(exited) > 0 {
				after++
			}
			return after == 3
		}, f)
	if len(exited) != 1 || exited[0] != 10 {
		t.Fatalf("OnExit calls %v, want [10]", exited)
	}
	// Every window closed after OnExit is without it, the last (cut
	// short by the cancel) too.
	for _, w := range ws[len(ws)-after:] {
		if len(w.Processes) != 0 || len(w.Samples) != 0 {
			t.Fatalf("the exited target is still in later windows: %+v", w.Processes)
		}
	}
	// Windows of 100 ms with a tick every 10 ms: a window closes at the
	// first tick after its end, later only as much as the machine's load
	// made that tick late.
	checkWindowLengths(t, ws, waits, window, 40*time.Millisecond)

	// Without KeepRunning, Run ends when every target has exited.
	f2 := newFake(11, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1}}})
	f2.ExitAt = time.Now().Add(200 * time.Millisecond)
	s, _ := New(Config{Hz: 100})
	s.Add(f2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := s.Run(ctx); !errors.Is(err, ErrAllExited) || time.Since(start) > 2*time.Second {
		t.Fatalf("Run = %v after %v, want ErrAllExited soon after the exit", err, time.Since(start))
	}
}

// TestSamplerHotPathDoesNotAllocate: a tick allocates nothing in steady
// state, with a timeline kept (Config.Timeline) or not.
func TestSamplerHotPathDoesNotAllocate(t *testing.T) {
	for _, timeline := range []int{0, 1 << 20} {
		f := newFake(10, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2, 3}}, 2: {Share: 1, Stack: []uint64{4, 5}}})
		s := tickable(t, Config{Hz: 1000, Timeline: timeline}, f)
		tick := int64(0)
		for i := 0; i < 10; i++ { // warm up: threads, buffers, map entries
			tick++
			time.Sleep(2 * time.Millisecond)
			s.tick(tick)
		}
		allocs := testing.AllocsPerRun(50, func() {
			tick++
			f.Start = f.Start.Add(-2 * time.Millisecond) // 2 periods of CPU per tick
			s.tick(tick)
		})
		if allocs != 0 {
			t.Fatalf("timeline %d: a tick allocates %.1f times", timeline, allocs)
		}
		if timeline > 0 && s.win.timeline.n < 100 {
			t.Fatalf("timeline %d: %d samples on the timeline after 60 ticks", timeline, s.win.timeline.n)
		}
	}
}

func TestTimerDelayWakesTheRuntimeOncePerTick(t *testing.T) {
	for d := time.Duration(0); d < 25*time.Millisecond; d += 7 * time.Microsecond {
		got := timerDelay(d)
		if runtime.GOOS != "linux" || d < time.Millisecond+netpollSlop {
			if got != d {
				t.Fatalf("timerDelay(%v) = %v, want it unchanged", d, got)
			}
			continue
		}
		// Never late, less than a millisecond early, and whole
		// milliseconds (epoll's unit) plus the slop.
		if got > d || d-got >= time.Millisecond {
			t.Fatalf("timerDelay(%v) = %v: not within the millisecond before the deadline", d, got)
		}
		if (got-netpollSlop)%time.Millisecond != 0 {
			t.Fatalf("timerDelay(%v) = %v: not whole milliseconds plus %v", d, got, netpollSlop)
		}
	}
}

// lateLibrary is a fake target whose library is mapped only 20 ms after it
// is added (a command launched at its exec, before the dynamic loader ran),
// and which exits after exitAt, when its memory map can no longer be read.
type lateLibrary struct {
	*targettest.Fake
}

func (l lateLibrary) Images() (*images.Set, error) {
	switch {
	case l.Exited():
		return nil, target.ErrExited
	case time.Since(l.Start) < 20*time.Millisecond:
		return images.NewSet([]*images.Image{{Path: "/bin/cmd", Start: 0x1000, Limit: 0x2000}}), nil
	}
	return images.NewSet([]*images.Image{{Path: "/bin/cmd", Start: 0x1000, Limit: 0x2000}, {Path: "/lib/late.so", Start: 0x7000, Limit: 0x8000}}), nil
}

// TestImagesOfAShortLivedTarget: a target that exits within a second has
// the library it mapped after being added in its profile, so that its
// frames there can be named.
func TestImagesOfAShortLivedTarget(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{0x7100, 0x1100}}})
	// It exits before the steady refresh, a second after it was added.
	f.ExitAt = time.Now().Add(800 * time.Millisecond)
	ws := run(t, Config{Hz: 100}, 1200*time.Millisecond, lateLibrary{f})
	if len(ws) == 0 || len(ws[0].Processes) != 1 {
		t.Fatalf("windows %d, want one with the process", len(ws))
	}
	var paths []string
	if imgs := ws[0].Processes[0].Images; imgs != nil {
		for _, im := range imgs.Images() {
			paths = append(paths, im.Path)
		}
	}
	if !slices.Contains(paths, "/lib/late.so") {
		t.Fatalf("images of the exited target %v, want /lib/late.so, mapped 20 ms after it was added", paths)
	}
}
