//go:build !(linux && (amd64 || arm64)) && !darwin

package main

import (
	"fmt"
	"runtime"

	"github.com/macprof/macprof/target"
)

var errNoBackend = fmt.Errorf("profiling is not supported on %s/%s: macprof has backends for darwin (arm64, amd64) and linux (amd64, arm64)", runtime.GOOS, runtime.GOARCH)

// newOSBackend returns a backend that reports this OS has none.
func newOSBackend() backend {
	return backend{
		attach: func(int, target.Options) (target.Target, error) { return nil, errNoBackend },
		launch: func([]string, target.Options) (target.Launched, error) { return nil, errNoBackend },
	}
}
