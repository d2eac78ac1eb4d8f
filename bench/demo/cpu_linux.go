package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time the calling OS thread has used in user and
// in system mode.
func threadCPU() (user, sys time.Duration, ok bool) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), true
}

// processCPU returns the CPU time the whole process has used, user and
// system: the harness takes it from a profiler's total to find the
// profiler's own share.
func processCPU() (time.Duration, bool) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
