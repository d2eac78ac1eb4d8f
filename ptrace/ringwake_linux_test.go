//go:build linux && (amd64 || arm64)

package ptrace

import (
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// TestRingWakesWhenHalfFull: with Options.Kernel.SamplesWaiting, a thread's first
// ring with callchains is small and its watch calls SamplesWaiting once the
// kernel has written half of it, not before; drains meanwhile leave the
// interval to the long one; a drain that shows the ring filling within
// twice that interval grows it four times (where rings may grow), and
// closing the target ends the watches.
func TestRingWakesWhenHalfFull(t *testing.T) {
	const period = time.Millisecond
	var wakes atomic.Int64
	var halfAtWake atomic.Bool
	var tg *Target
	opts := target.Options{Continuous: true, Unwind: unwind.MethodFP, Kernel: target.KernelSampling{Period: period, MaxDrainInterval: time.Second}}
	var ring atomic.Pointer[perfRing]
	opts.Kernel.SamplesWaiting = func() {
		if r := ring.Load(); r != nil && r.halfFull() {
			halfAtWake.Store(true)
		}
		wakes.Add(1)
	}
	_, tg = startDeep(t, opts, "1", "12")
	goroutines := runtime.NumGoroutine()
	tids, err := tg.Threads(nil)
	if err != nil {
		t.Fatal(err)
	}
	tid := int(worker(t, tg, tids)) // the spinning thread
	kernelCapture(t, tg, tid, target.NewCapture(512, 64<<10))
	r := tg.threads[tid].kernel.ring
	ring.Store(r)
	small := perfRingBytes(ringSpec{period: period, interval: tg.drainInterval(chainRingPeriods)})
	if r == nil || !r.chain || len(r.data) != small || r.stopWatch == nil {
		t.Fatalf("first ring: %+v, want a watched ring with callchains of %d bytes", r, small)
	}
	if d, long := tg.DrainInterval(), tg.drainInterval(maxChainPeriods); d != long || long != time.Second {
		t.Errorf("drain interval %v with a watched small ring, want %v (1 s)", d, long)
	}
	// Nothing drains: the kernel fills the ring, and wakes the watch at
	// half of it (a second of CPU at the least with 64 KiB of samples of
	// up to ~130 bytes; a loaded machine gives the thread less).
	if !testprog.Poll(30*time.Second, func() bool { return wakes.Load() > 0 }) {
		t.Fatalf("no wake-up in 30 s; %d bytes in the ring of %d", r.meta.Data_head-r.meta.Data_tail, len(r.data))
	}
	if !halfAtWake.Load() {
		t.Errorf("woken with the ring less than half full")
	}
	// Drains 200 ms apart: each finds the rate since the last, at which
	// the small ring fills within two seconds while the thread gets more
	// than about 45% of a CPU, and then grows it.
	caps := drainCaps(8)
	drainRing(t, tg, target.ThreadID(tid), caps)
	from, err := tg.Info(target.ThreadID(tid))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if tg.kernel.ringsMayGrow {
		testprog.PollEvery(20*time.Second, 200*time.Millisecond, func() bool {
			drainRing(t, tg, target.ThreadID(tid), caps)
			return tg.threads[tid].kernel.ring != r
		})
	}
	grown := tg.threads[tid].kernel.ring
	to, err := tg.Info(target.ThreadID(tid))
	if err != nil {
		t.Fatal(err)
	}
	share := float64(to.CPUTime-from.CPUTime) / float64(time.Since(began))
	switch {
	case tg.kernel.ringsMayGrow && grown == r && share < 0.45:
		// A loaded machine gave the thread too little CPU for its ring
		// to fill within two seconds: not growing it is right.
		t.Logf("the thread ran %.0f%% of the time: its ring stays %d bytes", 100*share, len(r.data))
	case tg.kernel.ringsMayGrow && (grown == r || len(grown.data) != 4*small || grown.stopWatch == nil):
		t.Errorf("after a drain at a busy thread's rate: ring of %d bytes, want a watched ring of %d", len(grown.data), 4*small)
	case !tg.kernel.ringsMayGrow && grown != r:
		t.Errorf("the ring grew where locked memory is budgeted")
	}
	tg.Close()
	after := wakes.Load()
	time.Sleep(100 * time.Millisecond)
	if wakes.Load() != after {
		t.Error("a wake-up after Close")
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after Close, %d before: a watch outlived its ring", n, goroutines)
	}
}

// TestWatchRingNeedsThePoller: a file the Go runtime's poller cannot wait
// on (a regular file) is refused, so that its ring is not taken for
// watched and is drained as often as what it holds needs.
func TestWatchRingNeedsThePoller(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stop, err := watchRing(&perfRing{fd: int(f.Fd())}, func() { t.Error("woken") })
	if err == nil {
		stop()
		t.Fatal("watching a regular file: no error")
	}
}
