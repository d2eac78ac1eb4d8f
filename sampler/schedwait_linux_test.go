package sampler

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// schedWait returns how long this process's threads have waited for a CPU
// while runnable, all told (the second field of each thread's
// /proc/self/task/*/schedstat): the measure of how late a loaded machine
// made a timer's goroutine run. Timing tests add what it grew by to their
// tolerances. It is 0 when the kernel does not keep it.
func schedWait() time.Duration {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/schedstat")
		if err != nil {
			continue // the thread is gone
		}
		if f := strings.Fields(string(b)); len(f) >= 2 {
			if ns, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				sum += time.Duration(ns)
			}
		}
	}
	return sum
}
