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

// selfCPU returns the CPU time (user and system) macprof's own process has
// used since it started: the summary's "profiler CPU", which covers the
// start-up, attach and writing the profile as well as the sampling.
func selfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
