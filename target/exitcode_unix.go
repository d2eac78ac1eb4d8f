//go:build unix

package target

import "syscall"

// ExitCode maps a launched command's wait status to the status a profiler
// that ran it forwards: its exit code, or 128 plus the signal that ended it,
// as shells report it.
func ExitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
