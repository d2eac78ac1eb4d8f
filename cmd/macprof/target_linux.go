//go:build linux && (amd64 || arm64)

package main

import (
	"github.com/macprof/macprof/ptrace"
	"github.com/macprof/macprof/target"
)

// newOSBackend returns the Linux backend: ptrace and perf_event, and the
// process tree from /proc.
func newOSBackend() backend {
	return backend{
		attach: func(pid int, opts target.Options) (target.Target, error) { return ptrace.Attach(pid, opts) },
		launch: func(args []string, opts target.Options) (target.Launched, error) {
			return ptrace.Launch(args, opts)
		},
		descendants:  func() func(root int, dst []int) []int { return new(ptrace.ProcessTree).Descendants },
		settled:      func() func() bool { return new(ptrace.PIDWatch).Settled },
		watchExit:    ptrace.WatchExit,
		fromTerminal: ptrace.FromTerminal,
	}
}
