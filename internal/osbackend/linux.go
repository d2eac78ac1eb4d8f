//go:build linux && (amd64 || arm64)

package osbackend

import (
	"github.com/macprof/macprof/ptrace"
	"github.com/macprof/macprof/target"
)

// OS returns the Linux backend: ptrace and perf_event, and the
// process tree from /proc.
func OS() Backend {
	return Backend{
		Attach: func(pid int, opts target.Options) (target.Target, error) { return ptrace.Attach(pid, opts) },
		Launch: func(args []string, opts target.Options) (target.Launched, error) {
			return ptrace.Launch(args, opts)
		},
		Descendants:  func() func(root int, dst []int) []int { return new(ptrace.ProcessTree).Descendants },
		Settled:      func() func() bool { return new(ptrace.PIDWatch).Settled },
		WatchExit:    ptrace.WatchExit,
		FromTerminal: ptrace.FromTerminal,
	}
}
