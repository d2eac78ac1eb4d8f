//go:build linux && (amd64 || arm64)

package ptrace

import (
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind/cfi"
)

// TestKernelSampleFirstCaptureWalksWithTables: a kernel-sampled thread's
// first capture stops it (its ring is not open yet) and walks while it is
// held, waiting for no table; when the tables are not built yet (a
// command's first milliseconds), the copy is walked again once the thread
// runs, with the tables, so that a program without frame pointers gets its
// whole stack rather than [truncated];leaf weighing all its CPU time so far.
func TestKernelSampleFirstCaptureWalksWithTables(t *testing.T) {
	firstCaptureWithSlowTables(t, target.Options{Continuous: true, Kernel: target.KernelSampling{Period: 10 * time.Millisecond}})
}

// firstCaptureWithSlowTables attaches to nofp.c's recursing thread with
// opts, its unwind tables taking 300 ms each to build (as a command's
// libraries' do under load), captures it once and checks that the capture
// stopped it and holds its whole stack.
func firstCaptureWithSlowTables(t *testing.T, opts target.Options) {
	t.Helper()
	old := cfiTables
	cfiTables = cfi.NewCache(cfi.CacheOptions{Load: func(path string) (*cfi.Table, error) {
		time.Sleep(300 * time.Millisecond)
		return cfi.Load(path)
	}})
	t.Cleanup(func() { cfiTables = old })

	p := testprog.Start(t, testprog.BuildCNoFP(t, "nofp.c"), "12")
	tg, err := Attach(p.PID, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	if _, err := tg.Images(); err != nil { // as the sampler does when it takes a target
		t.Fatal(err)
	}
	tids, err := tg.Threads(nil)
	if err != nil {
		t.Fatal(err)
	}
	tid := worker(t, tg, tids)
	c := target.NewCapture(512, 64<<10)
	if err := captureStop(t, tg, tid, c); err != nil { // again where a loaded machine timed the stop out
		t.Fatal(err)
	}
	if c.Stopped == 0 {
		t.Fatalf("the first capture did not stop the thread: not the capture meant")
	}
	if c.Walk.Stop.Truncated() || len(c.PCs) < 14 {
		t.Errorf("first capture: %d frames, ended %v; want the whole stack (at least 14 frames, to the thread's start)", len(c.PCs), c.Walk.Stop)
	}
}

// TestStopFirstCaptureWalksWithTables: a target sampled by stops (wall
// mode, --capture stop) walks each capture while the thread is held,
// waiting for no table; the first captures after an attach come before
// the tables are built, so the copy is walked again once the thread runs,
// with them, rather than by frame records that a program without frame
// pointers does not keep (a stack cut short, or ending in a made-up root).
func TestStopFirstCaptureWalksWithTables(t *testing.T) {
	firstCaptureWithSlowTables(t, target.Options{Continuous: true})
}
