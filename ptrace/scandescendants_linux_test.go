//go:build linux && (amd64 || arm64)

package ptrace

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
)

// TestScanDescendants finds a child and its grandchild from the parent
// links of /proc/PID/stat, and not this process itself.
func TestScanDescendants(t *testing.T) {
	c := exec.Command("sh", "-c", "sleep 30 & wait")
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); c.Wait() }()
	var got []int
	for range 2000 {
		if got = scanDescendants(os.Getpid(), got[:0]); len(got) >= 2 {
			break
		}
	}
	if len(got) != 2 || !slices.Contains(got, c.Process.Pid) || slices.Contains(got, os.Getpid()) {
		t.Errorf("descendants %v, want the shell %d and its sleep", got, c.Process.Pid)
	}
}
