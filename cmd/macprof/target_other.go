//go:build !(linux && (amd64 || arm64)) && !darwin

package main

import (
	"fmt"
	"runtime"

	"github.com/macprof/macprof/target"
)

var errNoBackend = fmt.Errorf("profiling is not supported on %s/%s: macprof has backends for darwin (arm64, amd64) and linux (amd64, arm64)", runtime.GOOS, runtime.GOARCH)

// attach reports that this OS has no backend.
func attach(pid int, opts target.Options) (target.Target, error) { return nil, errNoBackend }

// launch reports that this OS has no backend.
func launch(args []string, opts target.Options) (target.Launched, error) {
	return nil, errNoBackend
}
