//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
)

// perfFDs counts macprof's open perf_event files.
func perfFDs(t *testing.T) int {
	return openFiles(t, func(link string) bool { return strings.Contains(link, "perf_event") })
}

// openFiles counts this process's descriptors whose link in /proc/self/fd
// match accepts.
func openFiles(t *testing.T, match func(link string) bool) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if link, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && match(link) {
			n++
		}
	}
	return n
}

// ringsOpen counts the threads of tg that have a ring.
func ringsOpen(tg *Target) int {
	tg.stateMu.Lock()
	defer tg.stateMu.Unlock()
	n := 0
	for _, th := range tg.threads {
		if th.kernel.ring != nil {
			n++
		}
	}
	return n
}

// TestKernelSampleRingsHaveACeiling: beyond maxRings rings, threads are
// stopped for their samples instead, with a warning; a ring that closes
// makes room for a busy one of them.
func TestKernelSampleRingsHaveACeiling(t *testing.T) {
	opts := target.Options{Continuous: true, Kernel: target.KernelSampling{Period: 10 * time.Millisecond}}
	_, tg := startDeep(t, opts, "4", "3")
	tg.kernel.maxRings = 2
	fds := perfFDs(t)
	tids, _ := tg.Threads(nil)
	if len(tids) != 5 {
		t.Fatalf("threads %v, want the main thread and 4 spinning", tids)
	}
	spinning := workers(tg, tids)
	c := target.NewCapture(512, 64<<10)
	for _, tid := range spinning {
		if err := captureStop(t, tg, tid, c); err != nil {
			t.Fatalf("capture of thread %d: %v", tid, err)
		}
		if c.Stopped == 0 {
			t.Fatalf("thread %d: its first capture did not stop it", tid)
		}
	}
	if n := ringsOpen(tg); n != 2 || perfFDs(t)-fds != 2 {
		t.Fatalf("%d rings and %d perf files for 4 busy threads, want the ceiling, 2", n, perfFDs(t)-fds)
	}
	if err := tg.KernelSampleWarning(); err == nil || !strings.Contains(err.Error(), "at most 2") {
		t.Errorf("KernelSampleWarning() = %v, want the ceiling", err)
	}
	// The sampler keeps draining: ticks every period for threads beyond
	// the ceiling, which are many, would cost more than their stops.
	if on, all := tg.KernelSampled(); !on || !all {
		t.Errorf("KernelSampled() = %v, %v at the ceiling, want true, true", on, all)
	}
	// A ring that goes makes room for a thread that had none, once its
	// captures come within ringBusy: these spin, so they do.
	tg.hotMu.Lock()
	tg.stateMu.Lock()
	tg.threads[int(spinning[0])].kernel.closeRing()
	tg.stateMu.Unlock()
	tg.hotMu.Unlock()
	if err := captureStop(t, tg, spinning[3], c); err != nil {
		t.Fatal(err)
	}
	if tg.threads[int(spinning[3])].kernel.ring == nil || ringsOpen(tg) != 2 {
		t.Errorf("a busy thread without a ring got none once there was room (%d rings)", ringsOpen(tg))
	}
}

// TestKernelSampleRingOfALightThreadCloses: a thread without a sample in a
// ringIdle loses its ring and file, is stopped for its captures while they
// come more than ringBusy apart, and gets a ring again when two come
// closer.
func TestKernelSampleRingOfALightThreadCloses(t *testing.T) {
	const period = 5 * time.Millisecond
	p, tg, tid, c := startSpinExit(t, period, "30000", "idle")
	tg.kernel.ringIdle, tg.kernel.ringBusy = 200*time.Millisecond, 100*time.Millisecond
	if err := p.Cmd.Process.Signal(syscall.SIGUSR1); err != nil { // the thread goes to sleep
		t.Fatal(err)
	}
	fds := perfFDs(t)
	if !testprog.PollEvery(10*time.Second, 20*time.Millisecond, func() bool {
		_, err := tg.DrainSamples(tid, []*target.Capture{c})
		if err != nil && !errors.Is(err, target.ErrNotKernelSampled) {
			t.Fatal(err)
		}
		return err != nil
	}) {
		t.Fatal("the ring of a thread asleep is still open")
	}
	if fds-perfFDs(t) != 1 {
		t.Fatalf("%d perf files closed with the ring, want 1", fds-perfFDs(t))
	}
	// A capture more than ringBusy after the last: again after a stop
	// that timed out (a loaded machine: the thread not scheduled within
	// the stop's bound), so that the retry is as long after it.
	var err error
	for try := 0; try < 20; try++ {
		time.Sleep(tg.kernel.ringBusy + 100*time.Millisecond)
		if err = tg.Capture(tid, c); !errors.Is(err, target.ErrStopTimeout) {
			break
		}
	}
	if err != nil || c.Stopped == 0 {
		t.Fatalf("capture of a light thread: %v, stopped %v; want a stop", err, c.Stopped)
	}
	if ringsOpen(tg) != 0 {
		t.Fatal("a light thread got a ring back at a capture more than ringBusy after the last")
	}
	for try := 0; try < 20; try++ { // again where the stop timed out
		if err = tg.Capture(tid, c); !errors.Is(err, target.ErrStopTimeout) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if ringsOpen(tg) != 1 || tg.kernel.rings.Load() != 1 {
		t.Errorf("%d rings (%d counted) after two captures within %v, want 1", ringsOpen(tg), tg.kernel.rings.Load(), tg.kernel.ringBusy)
	}
}

// procFDs counts macprof's open files under /proc/PID/task/.
func procFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n, prefix := 0, "/proc/"+strconv.Itoa(pid)+"/task/"
	for _, e := range ents {
		if link, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(link, prefix) {
			n++
		}
	}
	return n
}

// TestListedThreadHoldsOneFile: a listed thread keeps only its schedstat
// open (read every tick); stat, read by stop-mode captures and exit
// checks, is opened for the threads that need it.
func TestListedThreadHoldsOneFile(t *testing.T) {
	const n = 200
	p := testprog.Start(t, testprog.BuildC(t, "sparse.c"), strconv.Itoa(n), "50", "100")
	tg, err := Attach(p.PID, target.Options{Continuous: true, Kernel: target.KernelSampling{Period: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	var tids []target.ThreadID
	if !testprog.Poll(30*time.Second, func() bool {
		if tids, err = tg.Threads(tids[:0]); err != nil {
			t.Fatal(err)
		}
		return len(tids) >= n+1
	}) {
		t.Fatalf("%d threads listed, want %d", len(tids), n+1)
	}
	for _, tid := range tids {
		if _, err := tg.Info(tid); err != nil {
			t.Fatalf("Info(%d): %v", tid, err)
		}
	}
	// The exit check reads the leader's state: one more file.
	if got := procFDs(t, p.PID); got < len(tids) || got > len(tids)+1 {
		t.Errorf("%d /proc files open for %d threads, want one each (and the leader's stat)", got, len(tids))
	}
	tg.Close()
	if got := procFDs(t, p.PID); got != 0 {
		t.Errorf("%d /proc files open after Close", got)
	}
}

// TestKernelSampleRingOfASlowThreadStays: a thread sampled once in a
// ringIdle (at 19 Hz, one using 4% of a CPU is sampled under once a second)
// keeps its ring; only one with no sample loses it. With a rate threshold
// (5 samples in 5 s, before) such threads were stopped for every capture.
func TestKernelSampleRingOfASlowThreadStays(t *testing.T) {
	const period = 5 * time.Millisecond
	p, tg, tid, c := startSpinExit(t, period, "30000", "idle")
	tg.kernel.ringIdle = 200 * time.Millisecond
	spinFor(t, tg, tid, 3*period)
	if err := p.Cmd.Process.Signal(syscall.SIGUSR1); err != nil { // the thread goes to sleep
		t.Fatal(err)
	}
	// The signal takes effect when the thread next runs: on a loaded
	// machine it may spin (and be sampled) for a while yet.
	testprog.WaitFor(t, 30*time.Second, func() bool { return slices.Contains(threadsIn(p.PID, "S"), int(tid)) },
		fmt.Sprintf("thread %d to sleep after SIGUSR1", tid))
	th := tg.threads[int(tid)]
	// A window that began long ago and holds every sample the thread left.
	tg.hotMu.Lock()
	th.kernel.windowStart, th.kernel.windowSamples = time.Now().Add(-time.Second), 0
	tg.hotMu.Unlock()
	caps := []*target.Capture{c}
	for len(caps) < 8 {
		caps = append(caps, target.NewCapture(512, 64<<10))
	}
	total := 0
	for {
		n, err := tg.DrainSamples(tid, caps)
		if err != nil {
			t.Fatalf("DrainSamples = %d, %v; want the samples of %v of CPU", n, err, 3*period)
		}
		if total += n; n < len(caps) {
			break
		}
	}
	if total == 0 {
		t.Fatalf("no samples drained of %v of CPU", 3*period)
	}
	if ringsOpen(tg) != 1 {
		t.Fatalf("a thread with %d samples in its last window lost its ring", total)
	}
	// The next window has none: the ring goes.
	tg.hotMu.Lock()
	th.kernel.windowStart = time.Now().Add(-time.Second)
	tg.hotMu.Unlock()
	if _, err := tg.DrainSamples(tid, []*target.Capture{c}); err != nil && !errors.Is(err, target.ErrNotKernelSampled) {
		t.Fatal(err)
	}
	if ringsOpen(tg) != 0 {
		t.Error("a thread without a sample in its last window kept its ring")
	}
}
