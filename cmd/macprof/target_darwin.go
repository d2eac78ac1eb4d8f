//go:build darwin

package main

import (
	"fmt"
	"os"

	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/target"
)

// attach opens the darwin backend for a running process.
func attach(pid int, opts target.Options) (target.Target, error) {
	return mach.Attach(pid, opts)
}

// launch starts a command suspended (posix_spawn), attaches, and resumes
// it. Under sudo the command runs as root: posix_spawn has no public way to
// drop credentials (see docs/DARWIN.md).
func launch(args []string, opts target.Options) (target.Target, func() int, error) {
	t, err := mach.Launch(args, os.Environ(), opts)
	if err != nil {
		return nil, nil, err
	}
	wait := func() int {
		if ws, known := t.ExitStatus(); known {
			return waitStatusCode(ws)
		}
		ws, err := t.Wait()
		if err != nil {
			fmt.Fprintf(os.Stderr, "macprof: wait for %s: %v\n", args[0], err)
			return 1
		}
		return waitStatusCode(ws)
	}
	return t, wait, nil
}
