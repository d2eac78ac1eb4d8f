//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
)

// TestAttachExitedProcess: a process that has exited but is not reaped
// yet (the kernel refuses to trace it with EPERM, as it refuses a
// forbidden one) is reported as exited, wrapping target.ErrExited, in both
// modes, never as a permission the kernel refused.
func TestAttachExitedProcess(t *testing.T) {
	cmd := exec.Command("/bin/true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	testprog.WaitFor(t, 10*time.Second, func() bool { return taskEnded(pid, pid) },
		fmt.Sprintf("PID %d to be a zombie", pid))
	for _, continuous := range []bool{false, true} {
		tg, err := Attach(pid, target.Options{Continuous: continuous})
		if err == nil {
			tg.Close()
			t.Fatalf("continuous %v: attached to a zombie", continuous)
		}
		if !errors.Is(err, target.ErrExited) || !strings.Contains(err.Error(), "it exited") || strings.Contains(err.Error(), "refused") {
			t.Errorf("continuous %v: %v; want it reported as exited (target.ErrExited)", continuous, err)
		}
	}
}

// TestAttachWithMainThreadExited: a process whose main thread has exited
// (pthread_exit) while another runs on is alive, not exiting: both modes
// attach through its live thread, which a snapshot captures.
func TestAttachWithMainThreadExited(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "mainexit.c"), "60")
	testprog.WaitFor(t, 10*time.Second, func() bool { return taskEnded(p.PID, p.PID) },
		fmt.Sprintf("the main thread of PID %d to exit", p.PID))
	if exitedProcess(p.PID) {
		t.Error("exitedProcess: a process running on without its main thread taken for exiting")
	}
	for _, continuous := range []bool{false, true} {
		tg, err := Attach(p.PID, target.Options{Continuous: continuous})
		if err != nil {
			t.Errorf("continuous %v: %v", continuous, err)
			continue
		}
		if !continuous {
			caps, err := tg.CaptureAll(nil)
			live := 0
			for _, c := range caps {
				if c.Err == nil && len(c.PCs) > 0 {
					live++
				}
			}
			if err != nil || live != 1 {
				t.Errorf("CaptureAll: %d threads captured, %v; want the live one", live, err)
			}
		}
		tg.Close()
	}
}
