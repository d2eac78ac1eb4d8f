//go:build !(linux && (amd64 || arm64)) && !darwin

package main

import (
	"fmt"
	"runtime"

	"github.com/macprof/macprof/sampler"
)

// attach reports that this OS has no backend.
func attach(pid int, opts sampler.TargetOptions) (sampler.Target, error) {
	return nil, fmt.Errorf("profiling is not supported on %s/%s: macprof has backends for darwin (arm64, amd64) and linux (amd64, arm64)", runtime.GOOS, runtime.GOARCH)
}
