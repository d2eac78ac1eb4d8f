//go:build linux && (amd64 || arm64)

package ptrace

import (
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
)

// TestFirstStackRingIsSmallUntilItsWalksDecide: with --unwind auto, a
// thread's first ring with stack copies is a probe ring of at most
// probeRingBytes, drained as often as it holds, and the ring its walks move
// it to (hybrid samples, testdata/hybrid.c) is the size such rings are.
// A thread whose walks decide nothing within probeSamples gets the ring of
// whole copies ringSpec gives (1 MiB at 1 kHz).
func TestFirstStackRingIsSmallUntilItsWalksDecide(t *testing.T) {
	bin, _ := buildFixture(t, "hybrid.c", "-O1", "-fno-omit-frame-pointer")
	for _, decides := range []bool{true, false} {
		p := testprog.Start(t, bin) // ended at the test's cleanup
		tg := attachSampled(t, p.PID)
		tid := clonedThread(t, tg, p.PID)
		captureFirst(t, tg, tid)
		th := tg.threads[int(tid)]
		tg.hotMu.Lock()
		r := th.kernel.ring
		if r == nil {
			tg.hotMu.Unlock()
			t.Fatal("no ring after the first capture")
		}
		if r.chain || r.hybrid || !th.kernel.probing || len(r.data) > probeRingBytes {
			tg.hotMu.Unlock()
			t.Fatalf("first ring: callchains %v, hybrid %v, %d bytes, probing %v; want whole copies in at most %d bytes", r.chain, r.hybrid, len(r.data), th.kernel.probing, probeRingBytes)
		}
		if want := tg.drainInterval(probeRingBytes/perfSampleMaxBytes(th.kernel.ringStack) - perfRingSlack); r.interval != want {
			t.Errorf("probe ring drained every %v, want %v (what it holds)", r.interval, want)
		}
		if !decides {
			// No walk counted as one a hybrid sample would serve.
			th.kernel.slimWait = 1 << 30
		}
		tg.hotMu.Unlock()
		caps := drainCaps(8)
		if !testprog.PollEvery(20*time.Second, 5*time.Millisecond, func() bool {
			drainRing(t, tg, tid, caps)
			return !th.kernel.probing
		}) {
			t.Fatalf("decides %v: still probing after 20 s (%d samples)", decides, th.kernel.ringSamples)
		}
		r = th.kernel.ring
		if decides {
			if !r.hybrid || len(r.data) != perfRingBytes(tg.hybridSpec(512)) {
				t.Errorf("after the probe: hybrid %v, %d bytes; want a hybrid ring of %d", r.hybrid, len(r.data), perfRingBytes(tg.hybridSpec(512)))
			}
		} else if r.hybrid || r.chain || len(r.data) != 1<<20 || r.interval != tg.ringSpec(th.kernel.ringStack).interval {
			t.Errorf("after a probe that decided nothing: hybrid %v, chain %v, %d bytes, drained every %v; want whole copies in 1 MiB, every %v",
				r.hybrid, r.chain, len(r.data), r.interval, tg.ringSpec(th.kernel.ringStack).interval)
		}
	}
}
