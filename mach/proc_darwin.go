//go:build darwin

package mach

import (
	"errors"
	"fmt"

	"github.com/macprof/macprof/target"
	"golang.org/x/sys/unix"
)

// processTranslated reports whether pid runs under Rosetta 2.
func processTranslated(pid int) (bool, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		if errors.Is(err, unix.EIO) {
			// No such process: the size check failed on an empty answer.
			return false, fmt.Errorf("PID %d: %w", pid, target.ErrExited)
		}
		return false, fmt.Errorf("sysctl kern.proc.pid.%d: %w", pid, err)
	}
	return Translated(kp.Proc.P_flag), nil
}
