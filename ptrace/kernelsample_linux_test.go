//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// TestKernelSampleOfAThreadGoneIsNoRefusal: a thread that ends between its
// first capture and the opening of its ring (perf_event_open fails with
// ESRCH) is no refusal of kernel samples: no warning, every thread still
// kernel-sampled, and a thread of that number is given a ring later.
func TestKernelSampleOfAThreadGoneIsNoRefusal(t *testing.T) {
	opts := target.Options{Continuous: true, Kernel: target.KernelSampling{Period: 10 * time.Millisecond}}
	_, tg := startDeep(t, opts, "1", "5")
	open, gone := tg.kernel.openRing, true
	tg.kernel.openRing = func(tid int, spec ringSpec) (*perfRing, bool, error) {
		if gone {
			gone = false
			return nil, false, fmt.Errorf("perf_event_open on thread %d: %w", tid, unix.ESRCH)
		}
		return open(tid, spec)
	}
	tids, _ := tg.Threads(nil)
	tid := worker(t, tg, tids)
	c := target.NewCapture(512, 64<<10)
	if err := captureStop(t, tg, tid, c); err != nil {
		t.Fatalf("capture: %v", err)
	}
	if err := tg.KernelSampleError(); err != nil {
		t.Errorf("KernelSampleError() = %v after a thread ended before its ring opened; want none", err)
	}
	if _, every := tg.KernelSampled(); !every {
		t.Error("KernelSampled: not every thread, after a thread ended before its ring opened")
	}
	testprog.WaitFor(t, 10*time.Second, func() bool {
		c.Walk = unwind.Result{}
		err := tg.Capture(tid, c)
		if err != nil && !errors.Is(err, ErrNoSample) {
			t.Fatal(err)
		}
		tg.stateMu.Lock()
		defer tg.stateMu.Unlock()
		return tg.threads[int(tid)].kernel.ring != nil
	}, "the thread's ring opened at a later capture")
}
