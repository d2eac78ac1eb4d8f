//go:build linux

package main

import (
	"os"
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
