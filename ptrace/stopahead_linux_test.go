//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
)

// TestStopBatchCapturesEveryThreadAndLetsAllGo: a batch of stop captures
// (wall mode) interrupts threads ahead of their turn, stopsAhead at a time,
// yet captures each with its whole stack and leaves none of them traced or
// stopped after it (one that did not stop in time aside: it is let go at a
// later batch once it stops). The stops overlap: the threads' stopped
// times add up to more than the batch took, where one after another they
// would add up to less (a loaded machine, where each waits for a CPU, made
// a wall tick of 120 busy threads last seconds).
func TestStopBatchCapturesEveryThreadAndLetsAllGo(t *testing.T) {
	const spinning = 16 // twice stopsAhead
	p, tg := startDeep(t, target.Options{Continuous: true}, "16", "15")
	for round := 0; round < 10; round++ {
		tids, err := tg.Threads(nil)
		if err != nil || len(tids) != spinning+1 {
			t.Fatalf("round %d: threads %v, %v; want %d", round, tids, err, spinning+1)
		}
		caps := make([]*target.Capture, len(tids))
		for i := range caps {
			caps[i] = target.NewCapture(512, 64<<10)
		}
		errs := make([]error, len(tids))
		start := time.Now()
		tg.CaptureBatch(tids, caps, errs)
		took := time.Since(start)
		var stopped time.Duration
		deep, late := 0, map[int]bool{}
		for i, id := range tids {
			switch {
			case errors.Is(errs[i], target.ErrStopTimeout):
				late[int(id)] = true // a loaded machine
			case errs[i] != nil:
				t.Fatalf("round %d: thread %d: %v", round, id, errs[i])
			case len(caps[i].PCs) >= 15:
				deep++
			}
			if errs[i] == nil {
				stopped += caps[i].Stopped
			}
		}
		if spinning-len(late) >= 2 && stopped <= took {
			t.Errorf("round %d: the threads were stopped %v in all in a batch of %v: their stops did not overlap", round, stopped, took)
		}
		if deep+len(late) < spinning {
			t.Fatalf("round %d: %d of %d spinning threads captured whole (%d did not stop in time)", round, deep, spinning, len(late))
		}
		for _, id := range tids {
			if late[int(id)] {
				continue
			}
			if v, _ := procStatusField(int(id), "TracerPid"); v != "0" {
				t.Fatalf("round %d: thread %d still traced (by %s) after the batch", round, id, v)
			}
		}
		for _, tid := range stoppedThreads(p.PID) {
			if !late[tid] {
				t.Fatalf("round %d: thread %d stopped after the batch", round, tid)
			}
		}
	}
}

// TestThreadInterruptedAheadIsLetGoWithoutItsCapture: a thread interrupted
// ahead whose capture does not come (it left the thread table mid-batch) is
// let go, untraced, and runs on.
func TestThreadInterruptedAheadIsLetGoWithoutItsCapture(t *testing.T) {
	p, tg := startDeep(t, target.Options{Continuous: true}, "1", "5")
	tids, _ := tg.Threads(nil)
	id := worker(t, tg, tids)
	th, err := tg.liveThread(int(id))
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tg.hotMu.Lock()
	defer tg.hotMu.Unlock()
	if !tg.interruptAhead(th) {
		t.Fatalf("thread %d not interrupted ahead", id)
	}
	if v, _ := procStatusField(int(id), "TracerPid"); v == "0" {
		t.Fatalf("thread %d interrupted ahead but not traced", id)
	}
	tg.letGoAhead(th)
	if th.stop.ahead {
		t.Fatalf("thread %d still marked interrupted ahead", id)
	}
	if v, _ := procStatusField(int(id), "TracerPid"); v != "0" {
		t.Fatalf("thread %d still traced (by %s) after it was let go", id, v)
	}
	_, before := cpuTicks(t, p.PID)
	if !testprog.Poll(10*time.Second, func() bool {
		_, after := cpuTicks(t, p.PID)
		return after > before
	}) {
		t.Fatalf("target ran no more after its thread was let go; stopped: %v", stoppedThreads(p.PID))
	}
}
