//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
)

// procComm reads /proc/PID/task/TID/comm, "" if it cannot.
func procComm(pid, tid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/comm", pid, tid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// TestThreadNamesFollowRenames: a kernel-sampled thread's name is read
// when it is first seen, then less and less often, not every second; a thread that renames
// itself has its new name at the first Info after the drain that read the
// rename's comm record from its ring; one renamed by another thread (whose
// comm record goes to that thread's events) has it within the recheck
// interval.
func TestThreadNamesFollowRenames(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "renamer.c"), "2")
	tg, err := Attach(p.PID, target.Options{Continuous: true, Kernel: target.KernelSampling{Period: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	if _, err := tg.Images(); err != nil {
		t.Fatal(err)
	}
	tids, err := tg.Threads(nil)
	if err != nil {
		t.Fatal(err)
	}
	var workers []target.ThreadID
	for _, id := range tids {
		if strings.HasPrefix(procComm(p.PID, int(id)), "rn-w") {
			workers = append(workers, id)
		}
	}
	if len(workers) != 2 {
		t.Fatalf("found %d workers named rn-w*, want 2", len(workers))
	}
	caps := make([]*target.Capture, 64)
	for i := range caps {
		caps[i] = target.NewCapture(256, 64<<10)
	}
	names := map[target.ThreadID]string{}
	// tick is one sampler tick: list, read each worker's info, capture
	// (the first one opens its ring) and drain.
	tick := func() {
		t.Helper()
		if _, err := tg.Threads(tids[:0]); err != nil {
			t.Fatal(err)
		}
		for _, id := range workers {
			info, err := tg.Info(id)
			if err != nil {
				t.Fatal(err)
			}
			names[id] = info.Name
			if _, err := tg.DrainSamples(id, caps); errors.Is(err, target.ErrNotKernelSampled) {
				if err := tg.Capture(id, caps[0]); err != nil && !errors.Is(err, ErrNoSample) {
					t.Fatal(err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
		}
	}

	// Ticks without a rename: each worker's comm read when first seen,
	// 1 s later, 2 s after that, and not again in the next 3 s (the
	// wait is 4 s by then).
	start := time.Now()
	for time.Since(start) < 3300*time.Millisecond {
		tick()
		time.Sleep(50 * time.Millisecond)
	}
	tg.stateMu.Lock()
	before := tg.names.reads
	tg.stateMu.Unlock()
	for time.Since(start) < 6300*time.Millisecond {
		tick()
		time.Sleep(50 * time.Millisecond)
	}
	tg.stateMu.Lock()
	reads := tg.names.reads - before
	tg.stateMu.Unlock()
	for _, id := range workers {
		if !strings.HasPrefix(names[id], "rn-w") {
			t.Fatalf("worker %d named %q, want rn-w*", id, names[id])
		}
	}
	if reads != 0 {
		t.Errorf("ticks 3.3-6.3 s after the workers were first seen read their comm files %d times, want none", reads)
	}

	// A worker renames itself: the comm record in its ring says so.
	if err := syscall.Kill(p.PID, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	renamed := func(prefix string) bool {
		for _, id := range workers {
			if !strings.HasPrefix(procComm(p.PID, int(id)), prefix) {
				return false
			}
		}
		return true
	}
	for end := time.Now().Add(30 * time.Second); !renamed("rn-self"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the workers did not rename themselves within 30 s")
		}
		tick()
	}
	// The drain of this tick reads the records, the next one's Info the
	// names.
	tick()
	tick()
	for _, id := range workers {
		if !strings.HasPrefix(names[id], "rn-self") {
			t.Errorf("thread %d renamed itself to %q, Info still says %q", id, procComm(p.PID, int(id)), names[id])
		}
	}

	// The main thread renames the workers: no record in their rings, so
	// the recheck bounds how long the old names last.
	tg.stateMu.Lock()
	tg.names.every = 500 * time.Millisecond
	tg.stateMu.Unlock()
	if err := syscall.Kill(p.PID, syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 30*time.Second, func() bool { return renamed("rn-main") }, "the main thread renamed the workers")
	at := time.Now()
	for {
		tick()
		all := true
		for _, id := range workers {
			all = all && strings.HasPrefix(names[id], "rn-main")
		}
		if all {
			break
		}
		if time.Since(at) > 10*time.Second {
			t.Fatalf("10 s after the main thread renamed the workers Info says %v; want rn-main* within the 500 ms recheck", names)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
