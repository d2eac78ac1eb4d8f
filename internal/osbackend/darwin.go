//go:build darwin

package osbackend

import (
	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/target"
)

// OS returns the darwin backend: task ports. A launched
// command's descendants are not followed yet, and a target's exit is found
// at the next tick.
func OS() Backend {
	return Backend{
		Attach: func(pid int, opts target.Options) (target.Target, error) { return mach.Attach(pid, opts) },
		Launch: func(args []string, opts target.Options) (target.Launched, error) {
			return mach.LaunchCommand(args, opts)
		},
	}
}
