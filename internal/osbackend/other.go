//go:build !(linux && (amd64 || arm64)) && !darwin

package osbackend

import (
	"fmt"
	"runtime"

	"github.com/macprof/macprof/target"
)

var errNoBackend = fmt.Errorf("profiling is not supported on %s/%s: macprof has backends for darwin (arm64, amd64) and linux (amd64, arm64)", runtime.GOOS, runtime.GOARCH)

// OS returns a backend that reports this OS has none.
func OS() Backend {
	return Backend{
		Attach: func(int, target.Options) (target.Target, error) { return nil, errNoBackend },
		Launch: func([]string, target.Options) (target.Launched, error) { return nil, errNoBackend },
	}
}
