//go:build linux

package main

import (
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// raisePriority asks for a higher CPU priority (nice -10) for every thread of
// macprof, where the system allows it (root or CAP_SYS_NICE). A snapshot
// keeps its target stopped while macprof works, so on a machine saturated by
// the target's own threads the snapshot is shorter for the target, too.
// Threads created later inherit the value from the thread that creates them.
func raisePriority() {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			unix.Setpriority(unix.PRIO_PROCESS, tid, -10)
		}
	}
}

// tuneForSampling prepares macprof's own process for continuous sampling
// through ptrace, and returns the function that restores what it changed
// (the priority stays raised). Call it after a launched command has
// started, so that the command does not inherit the raised priority.
//
//   - nice -10 for every macprof thread (raisePriority), where allowed: a
//     thread stopped for a sample waits for macprof, so macprof should win
//     the CPU against the target's busy threads.
//   - GOMAXPROCS 1 while sampling: the sampler is the only busy goroutine,
//     and with a second P idle the Go runtime wakes another thread to look
//     for work every time the sampler's timer readies it, a context switch
//     taken from the target on a busy machine (bench/RESULTS.md has the
//     measurement).
func tuneForSampling() (restore func()) {
	raisePriority()
	prev := runtime.GOMAXPROCS(1)
	return func() { runtime.GOMAXPROCS(prev) }
}
