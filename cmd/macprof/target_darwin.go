//go:build darwin

package main

import (
	"errors"

	"github.com/macprof/macprof/sampler"
)

// attach opens the darwin backend for a running process.
// TODO(darwin backend): wire mach.Attach once it lands.
func attach(pid int, opts sampler.TargetOptions) (sampler.Target, error) {
	return nil, errors.New("the darwin backend is not wired into the CLI yet")
}
