//go:build linux && (amd64 || arm64)

package main

import (
	"github.com/macprof/macprof/ptrace"
	"github.com/macprof/macprof/target"
)

// attach opens the OS backend for a running process.
func attach(pid int, opts target.Options) (target.Target, error) {
	return ptrace.Attach(pid, opts)
}

// launch starts a command and attaches to it.
func launch(args []string, opts target.Options) (target.Launched, error) {
	return ptrace.Launch(args, opts)
}
