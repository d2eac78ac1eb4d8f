//go:build linux && (amd64 || arm64)

package main

import (
	"github.com/macprof/macprof/ptrace"
	"github.com/macprof/macprof/sampler"
)

// attach opens the OS backend for a running process.
func attach(pid int, opts sampler.TargetOptions) (sampler.Target, error) {
	return ptrace.Attach(pid, opts)
}
