//go:build linux && (amd64 || arm64)

package ptrace

import (
	"os/exec"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A blocking wait4Raw hands its P back: with GOMAXPROCS 1, the goroutine
// that ends the child it waits for runs during the wait. A wait that held
// the P would let it run only once the child ended by itself, 20 s later.
func TestBlockingWaitLetsOtherGoroutinesRun(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal("sleep(1) not found")
	}
	cmd := exec.Command(sleep, "20")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Process.Release()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	start := time.Now()
	go unix.Kill(pid, unix.SIGKILL)
	var ws unix.WaitStatus
	got, err := wait4Raw(pid, &ws, 0)
	if err != nil || got != pid || !ws.Signaled() {
		t.Fatalf("wait4Raw(%d) = %d, %v, status %v", pid, got, err, ws)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the wait took %v: the goroutine that kills the child could not run while it lasted", d)
	}
}

// A blocking wait4Raw ends with EINTR when the stop timer's signal arrives,
// as the bound of a capture's wait needs.
func TestBlockingWaitEndsAtTheStopTimer(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal("sleep(1) not found")
	}
	cmd := exec.Command(sleep, "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var st stopTimer
	defer st.close()
	if err := st.arm(50 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var ws unix.WaitStatus
	_, err = wait4Raw(cmd.Process.Pid, &ws, 0)
	st.disarm()
	if err != unix.EINTR {
		t.Fatalf("wait4Raw on a live child: %v, want EINTR from the stop timer", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the wait ended after %v, when the child exited rather than at the timer", d)
	}
}
