//go:build darwin

package main

import (
	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/target"
)

// attach opens the darwin backend for a running process.
func attach(pid int, opts target.Options) (target.Target, error) {
	return mach.Attach(pid, opts)
}

// launch starts a command suspended, attaches to it, and resumes it.
func launch(args []string, opts target.Options) (target.Launched, error) {
	return mach.LaunchCommand(args, opts)
}
