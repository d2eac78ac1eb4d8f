//go:build darwin

package mach

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"github.com/macprof/macprof/target"
)

// posixSpawnStartSuspended is POSIX_SPAWN_START_SUSPENDED (<spawn.h>): the
// child is created as if it had received SIGSTOP before its first
// instruction, and SIGCONT resumes it.
const posixSpawnStartSuspended = 0x0080

// Launch starts a command suspended (posix_spawn with
// POSIX_SPAWN_START_SUSPENDED, since a forked Go process cannot safely run
// code before exec), attaches to it, then sends SIGCONT, so that no
// instruction of it runs unobserved. The command inherits macprof's stdio,
// environment (env nil) and credentials; if the attach fails it is killed
// and reaped. The Target reaps it when it exits; Wait and ExitStatus report
// how.
func Launch(argv []string, env []string, opts target.Options) (*Target, error) {
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
	cpath, err := syscall.BytePtrFromString(path)
	if err != nil {
		return nil, fmt.Errorf("launch %s: %w", argv[0], err)
	}
	cargv, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return nil, fmt.Errorf("launch %s: %w", argv[0], err)
	}
	cenv, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return nil, fmt.Errorf("launch %s: environment: %w", argv[0], err)
	}
	var attr unsafe.Pointer
	if e := posixSpawnattrInit(&attr); e != 0 {
		return nil, fmt.Errorf("launch %s: posix_spawnattr_init: %w", argv[0], e)
	}
	defer posixSpawnattrDestroy(&attr)
	if e := posixSpawnattrSetflags(&attr, posixSpawnStartSuspended); e != 0 {
		return nil, fmt.Errorf("launch %s: posix_spawnattr_setflags: %w", argv[0], e)
	}
	var pid int32
	if e := posixSpawn(&pid, cpath, nil, &attr, &cargv[0], &cenv[0]); e != 0 {
		return nil, fmt.Errorf("launch %s: posix_spawn: %w", argv[0], e)
	}
	t, err := attachLaunched(int(pid), opts)
	if err != nil {
		syscall.Kill(int(pid), syscall.SIGKILL)
		var ws syscall.WaitStatus
		syscall.Wait4(int(pid), &ws, 0, nil)
		return nil, fmt.Errorf("launch %s: %w", argv[0], err)
	}
	if err := syscall.Kill(int(pid), syscall.SIGCONT); err != nil {
		t.Release()
		syscall.Kill(int(pid), syscall.SIGKILL)
		return nil, fmt.Errorf("launch %s: resume with SIGCONT: %w", argv[0], err)
	}
	return t, nil
}

// attachLaunched attaches to the launched command pid and starts the
// goroutine that reaps it.
func attachLaunched(pid int, opts target.Options) (*Target, error) {
	t, err := attachTask(pid, opts)
	if err != nil {
		return nil, err
	}
	t.launched = true
	t.waitDone = make(chan struct{})
	go func() {
		var ws syscall.WaitStatus
		for {
			_, err := syscall.Wait4(pid, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			t.waitStatus, t.waitErr = ws, err
			close(t.waitDone)
			return
		}
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
