//go:build unix

package record

import (
	"syscall"
	"time"
)

// childrenCPU returns the CPU time (user and system) of macprof's children
// that were waited for, each with the descendants it waited for.
func childrenCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
