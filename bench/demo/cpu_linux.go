package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
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

// parentCPU returns the CPU time the parent process (a profiler that
// launched the demo) has used so far, summed over its threads from the
// scheduler's own accounting: the harness compares what profilers use
// while the workers run, as the work they do before and after takes
// nothing from them.
func parentCPU() (time.Duration, bool) {
	dir := fmt.Sprintf("/proc/%d/task", os.Getppid())
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, false
	}
	var sum time.Duration
	for _, e := range ents {
		b, err := os.ReadFile(dir + "/" + e.Name() + "/schedstat")
		if err != nil {
			continue // a thread that ended meanwhile
		}
		f, _, _ := strings.Cut(string(b), " ")
		if ns, err := strconv.ParseInt(f, 10, 64); err == nil {
			sum += time.Duration(ns)
		}
	}
	return sum, true
}
