package snapshot

import (
	"fmt"
	"os"
	"strconv"

	"github.com/macprof/macprof/internal/procstat"
)

// executable returns the path of pid's main executable, or "" when it is
// unknown (the process is gone).
func executable(pid int) string {
	exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return exe
}

// exited returns why pid cannot be snapshot when it has exited but is not
// reaped yet (every thread a zombie), or nil: the backend's error for such
// a process (ptrace's EPERM) would blame permissions.
func exited(pid int) error {
	dir := "/proc/" + strconv.Itoa(pid)
	tasks, err := os.ReadDir(dir + "/task")
	if err != nil || len(tasks) == 0 {
		return nil
	}
	for _, t := range tasks {
		tid, _ := strconv.Atoi(t.Name())
		if s, err := procstat.ReadTask(pid, tid); err != nil || s.State != 'Z' && s.State != 'X' {
			return nil
		}
	}
	s, _ := procstat.Read(pid)
	return fmt.Errorf("process %d (%s) has exited: it is a zombie until its parent (PID %d) reaps it, and has no stacks", pid, s.Comm, s.PPID)
}
