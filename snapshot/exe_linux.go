package snapshot

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
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
		if state, _, _ := taskStat(dir + "/task/" + t.Name() + "/stat"); state != 'Z' && state != 'X' {
			return nil
		}
	}
	_, comm, ppid := taskStat(dir + "/stat")
	return fmt.Errorf("process %d (%s) has exited: it is a zombie until its parent (PID %d) reaps it, and has no stacks", pid, comm, ppid)
}

// taskStat returns a task's state, name and parent from its stat file, or
// a zero state when it cannot be read (the task is gone).
func taskStat(path string) (state byte, comm string, ppid int) {
	b, err := os.ReadFile(path)
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if err != nil || open < 0 || end < open || len(b) < end+4 {
		return 0, "", 0
	}
	f := bytes.Fields(b[end+2:])
	if len(f) > 1 {
		ppid, _ = strconv.Atoi(string(f[1]))
	}
	return b[end+2], string(b[open+1 : end]), ppid
}
