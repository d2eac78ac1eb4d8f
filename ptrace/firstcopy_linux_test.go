//go:build linux && (amd64 || arm64)

package ptrace

import (
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// TestFirstRingCopiesWhatTheFirstWalkRead: a thread 19 KiB deep whose
// first capture (a stop) walked all of it gets a first ring whose samples
// copy 32 KiB, not 8 KiB grown once a ring's worth of samples ran past it:
// no second ring, and no sample walked past its copy.
func TestFirstRingCopiesWhatTheFirstWalkRead(t *testing.T) {
	const period = 2 * time.Millisecond
	opts := target.Options{Continuous: true, Kernel: target.KernelSampling{Period: period}}
	_, tg := startDeep(t, opts, "1", "12", "1536")
	if !tg.kernel.ringsMayGrow {
		t.Fatal("the tests run with CAP_IPC_LOCK (as root): rings should be allowed to grow")
	}
	tg.PrepareUnwind() // as the sampler reads the images first
	tids, _ := tg.Threads(nil)
	tid := worker(t, tg, tids)
	stop := target.NewCapture(512, 64<<10)
	if err := captureStop(t, tg, tid, stop); err != nil || stop.Walk.Stop.Truncated() {
		t.Fatalf("first capture: %v, walk ended %v; want a whole stack", err, stop.Walk.Stop)
	}
	th := tg.threads[int(tid)]
	if th.kernel.ring == nil || th.kernel.ringStack != 32<<10 {
		t.Fatalf("first ring copies %d bytes, want 32 KiB: what the first walk read (%d bytes above SP)", th.kernel.ringStack, stop.Walk.Top-stop.Regs.SP)
	}
	first := th.kernel.ring
	caps := []*target.Capture{target.NewCapture(512, 64<<10)}
	drained, past := 0, 0
	testprog.PollEvery(5*time.Second, 10*time.Millisecond, func() bool {
		for {
			n, err := tg.DrainSamples(tid, caps)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			drained++
			if caps[0].Walk.Stop == unwind.StopReadFailed || caps[0].Walk.AfterSampleFrames > 0 {
				past++
			}
		}
		return drained >= 50
	})
	if drained == 0 {
		t.Fatal("no sample drained in 5 s")
	}
	if past > 0 {
		t.Errorf("%d of %d samples walked past their copy", past, drained)
	}
	if th.kernel.ring != first {
		t.Errorf("the ring was reopened (copy now %d bytes)", th.kernel.ringStack)
	}
}
