package mach

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/macprof/macprof/target"
)

// LaunchKernel starts a command suspended (posix_spawn with
// POSIX_SPAWN_START_SUSPENDED, since a forked Go process cannot safely run
// code before exec), attaches to it, then sends SIGCONT, so that no
// instruction of it runs unobserved. The command inherits macprof's stdio,
// environment (env nil) and credentials; if the attach fails it is killed
// and reaped. The Target reaps it when it exits; Wait and ExitStatus report
// how.
func LaunchKernel(k Kernel, argv []string, env []string, opts target.Options) (*Target, error) {
	if len(argv) == 0 {
		return nil, errors.New("launch: no command")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	if env == nil {
		env = os.Environ()
	}
	pid, err := k.Spawn(path, argv, env)
	if err != nil {
		return nil, fmt.Errorf("launch %s: %w", argv[0], err)
	}
	t, err := attachLaunched(k, pid, opts)
	if err != nil {
		k.Kill(pid, syscall.SIGKILL)
		k.Wait4(pid)
		return nil, fmt.Errorf("launch %s: %w", argv[0], err)
	}
	if err := k.Kill(pid, syscall.SIGCONT); err != nil {
		t.Release()
		k.Kill(pid, syscall.SIGKILL)
		return nil, fmt.Errorf("launch %s: resume with SIGCONT: %w", argv[0], err)
	}
	return t, nil
}

// attachLaunched attaches to the launched command pid and starts the
// goroutine that reaps it.
func attachLaunched(k Kernel, pid int, opts target.Options) (*Target, error) {
	t, err := attachTask(k, pid, opts)
	if err != nil {
		return nil, err
	}
	t.launched = true
	t.waitDone = make(chan struct{})
	go func() {
		t.waitStatus, t.waitErr = k.Wait4(pid)
		close(t.waitDone)
	}()
	return t, nil
}

// Wait waits for a launched command to exit and returns its wait status.
func (t *Target) Wait() (syscall.WaitStatus, error) {
	if !t.launched {
		return 0, errors.New("wait: the target was not launched by macprof")
	}
	<-t.waitDone
	return t.waitStatus, t.waitErr
}

// ExitStatus returns a launched command's wait status once it has exited.
func (t *Target) ExitStatus() (syscall.WaitStatus, bool) {
	if !t.launched {
		return 0, false
	}
	select {
	case <-t.waitDone:
		return t.waitStatus, t.waitErr == nil
	default:
		return 0, false
	}
}
