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

// prepareForSampling sets GOMAXPROCS 1 for the recording, before its target
// starts, and returns what restores it: the sampler is the only busy
// goroutine, and with a second P idle the Go runtime wakes another thread
// to look for work every time the sampler's timer readies it, a context
// switch taken from the target on a busy machine (bench/RESULTS.md has the
// measurement). Before the target starts, as the change stops the world
// (half a millisecond of macprof's CPU in the command's first 50 ms, when
// it came after the launch); a launched command does not inherit it.
func prepareForSampling() (restore func()) {
	prev := runtime.GOMAXPROCS(1)
	return func() { runtime.GOMAXPROCS(prev) }
}

// tuneForSampling raises macprof's priority (nice -10 for every thread,
// raisePriority) where allowed, once a launched command has started, so
// that the command does not inherit it: a thread stopped for a sample waits
// for macprof, so macprof should win the CPU against the target's busy
// threads. The priority stays raised.
func tuneForSampling() (restore func()) {
	raisePriority()
	return func() {}
}
