package sampler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

// newFake is a target of the given threads, named "worker", whose CPU
// time follows the wall clock at their share and whose every capture
// stops them 10 µs.
func newFake(pid int, threads map[target.ThreadID]*targettest.Thread) *targettest.Fake {
	for _, th := range threads {
		th.Name = "worker"
	}
	f := targettest.New(pid, threads)
	f.Stopped = 10 * time.Microsecond
	return f
}

// samplesFor returns how many samples of one period each d stands for.
func samplesFor(d, period time.Duration) int64 { return int64(d / period) }

func run(t *testing.T, cfg Config, d time.Duration, targets ...target.Target) []*profile.Window {
	t.Helper()
	var ws []*profile.Window
	cfg.OnWindow = func(w *profile.Window) { ws = append(ws, w) }
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		s.Add(tg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := s.Run(ctx); err != nil && !errors.Is(err, ErrAllExited) {
		t.Fatal(err)
	}
	return ws
}

// runWindows runs the Sampler until stop, asked after each window, says
// so (or limit passes, a failure), and returns the windows and, for each,
// how long this process's threads waited for a CPU while it was open
// (schedWait): a window a loaded machine made longer by making the tick
// that closed it late is longer by at most that.
func runWindows(t *testing.T, cfg Config, limit time.Duration, stop func(ws []*profile.Window) bool, targets ...target.Target) ([]*profile.Window, []time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var ws []*profile.Window
	var waits []time.Duration
	last := schedWait()
	cfg.OnWindow = func(w *profile.Window) {
		now := schedWait()
		ws, waits = append(ws, w), append(waits, max(0, now-last))
		last = now
		if stop(ws) {
			cancel()
		}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		s.Add(tg)
	}
	if err := s.Run(ctx); err != nil {
		t.Fatalf("Run = %v after %d windows, want it to run until cancelled", err, len(ws))
	}
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("%d windows in %v, and the run was not stopped", len(ws), limit)
	}
	return ws, waits
}

// checkWindowLengths checks that the windows of a run follow one another
// and that each but the last (cut short by the run's end) lasted at least
// window and at most window+slack, plus how long this process waited for a
// CPU while it was open.
func checkWindowLengths(t *testing.T, ws []*profile.Window, waits []time.Duration, window, slack time.Duration) {
	t.Helper()
	for i, w := range ws {
		if i > 0 && !w.Start.Equal(ws[i-1].End) {
			t.Errorf("window %d starts at %v, %v after the previous one ended", i, w.Start, w.Start.Sub(ws[i-1].End))
		}
		if i == len(ws)-1 {
			break
		}
		l := w.End.Sub(w.Start)
		if l < window || l > window+slack+waits[i] {
			t.Errorf("window %d of %v, want %v to %v (%v plus %v of slack and the %v this process waited for a CPU)",
				i, l, window, window+slack+waits[i], window, slack, waits[i])
		}
	}
}

// tickable returns a Sampler for cfg with targets adopted and a window
// open, ready for tick calls without Run.
func tickable(t *testing.T, cfg Config, targets ...target.Target) *Sampler {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		s.Add(tg)
	}
	s.adopt()
	s.win = s.newWindow(time.Now())
	return s
}

func countBy(w *profile.Window) map[target.ThreadID]int64 {
	m := map[target.ThreadID]int64{}
	for _, s := range w.Samples {
		m[s.Thread] += s.Count
	}
	return m
}
