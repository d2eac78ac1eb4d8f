package mach

import (
	"fmt"
	"os"
	"syscall"

	"github.com/macprof/macprof/target"
)

// Launched is a command started by Launch, as target.Launched.
type Launched struct {
	*Target
	name string
}

var _ target.Launched = (*Launched)(nil)

// LaunchCommandKernel starts a command with macprof's environment (see Launch)
// and returns it with a Wait that gives the status to forward. Under sudo
// the command runs as the user who ran sudo (InvokingUser).
func LaunchCommandKernel(k Kernel, args []string, opts target.Options) (*Launched, error) {
	t, err := LaunchKernel(k, args, os.Environ(), opts)
	if err != nil {
		return nil, err
	}
	return &Launched{Target: t, name: args[0]}, nil
}

// Signal sends sig to the command with kill(2), unless it was reaped
// already (its PID may be another process's by then).
func (l *Launched) Signal(sig os.Signal) error {
	if _, reaped := l.ExitStatus(); reaped {
		return os.ErrProcessDone
	}
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("signal %v: not a syscall.Signal", sig)
	}
	return l.k.Kill(l.pid, s)
}

// Wait waits for the command to exit, unless the Target reaped it already,
// and returns the status to forward.
func (l *Launched) Wait() int {
	if ws, known := l.ExitStatus(); known {
		return target.ExitCode(ws)
	}
	ws, err := l.Target.Wait()
	if err != nil {
		fmt.Fprintf(os.Stderr, "macprof: wait for %s: %v\n", l.name, err)
		return 1
	}
	return target.ExitCode(ws)
}
