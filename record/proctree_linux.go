//go:build linux && (amd64 || arm64)

package record

import "github.com/macprof/macprof/ptrace"

// processTree returns a function that lists a process's descendants from
// /proc.
func processTree() func(root int, dst []int) []int { return new(ptrace.ProcessTree).Descendants }

// settledWatch returns what tells the sampler that no process or thread
// was created on the system since it last asked (sampler.Config.Settled).
func settledWatch() func() bool { return new(ptrace.PIDWatch).Settled }

// watchExit calls f when process pid exits (ptrace.WatchExit).
func watchExit(pid int, f func()) (stop func(), err error) { return ptrace.WatchExit(pid, f) }
