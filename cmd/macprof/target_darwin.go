//go:build darwin

package main

import (
	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/target"
)

// newOSBackend returns the darwin backend: task ports. A launched
// command's descendants are not followed yet, and a target's exit is found
// at the next tick.
func newOSBackend() backend {
	return backend{
		attach: func(pid int, opts target.Options) (target.Target, error) { return mach.Attach(pid, opts) },
		launch: func(args []string, opts target.Options) (target.Launched, error) {
			return mach.LaunchCommand(args, opts)
		},
	}
}
