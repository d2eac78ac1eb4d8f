//go:build linux || darwin

package main

import (
	"syscall"
)

// waitStatusCode maps a wait status to the exit status macprof forwards.
func waitStatusCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
