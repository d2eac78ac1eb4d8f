//go:build linux && (amd64 || arm64)

package ptrace

import (
	"os/exec"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
)

// TestWatchExitCallsOnExit: the callback comes when the process exits, not
// before, and stop after it returns at once.
func TestWatchExitCallsOnExit(t *testing.T) {
	cmd := exec.Command("sleep", "0.3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan time.Time, 1)
	start := time.Now()
	stop, err := WatchExit(cmd.Process.Pid, func() { exited <- time.Now() })
	if err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-exited:
		if at.Sub(start) < 250*time.Millisecond {
			t.Errorf("called after %v, before the process's 300 ms sleep ended", at.Sub(start))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("not called 20 s after a 300 ms process started")
	}
	stop()
	cmd.Wait()
}

// TestWatchExitStopWithoutExit: stop ends the watch of a process that goes
// on running, and the callback is never called.
func TestWatchExitStopWithoutExit(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	called := make(chan struct{}, 1)
	stop, err := WatchExit(cmd.Process.Pid, func() { called <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	stop()
	select {
	case <-called:
		t.Fatal("called for a process still running")
	default:
	}
	if _, err := WatchExit(1<<30, func() {}); err == nil {
		t.Error("watched a PID that cannot exist")
	}
}

// TestPIDWatchSeesNewThreads: a new process (here, a thread of the kernel's
// PID space like any other) ends the settled state, and two calls with
// nothing started between them report it settled, unless the machine
// started something meanwhile, which a retry 1 ms later gets past (for up
// to a minute, what 30,000 retries took at the most: the tests of other
// packages start compilers beside this one).
func TestPIDWatchSeesNewThreads(t *testing.T) {
	var w PIDWatch
	if w.Settled() {
		t.Fatal("the first call reported settled")
	}
	if err := exec.Command("true").Run(); err != nil {
		t.Fatal(err)
	}
	if w.Settled() {
		t.Fatal("settled after a process started")
	}
	if !testprog.PollEvery(time.Minute, time.Millisecond, w.Settled) {
		t.Fatal("never settled in a minute of calls 1 ms apart")
	}
}
