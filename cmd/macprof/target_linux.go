//go:build linux && (amd64 || arm64)

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/macprof/macprof/ptrace"
	"github.com/macprof/macprof/target"
)

// attach opens the OS backend for a running process.
func attach(pid int, opts target.Options) (target.Target, error) {
	return ptrace.Attach(pid, opts)
}

// launch starts a command (as the invoking user under sudo) and attaches to
// it. wait returns the command's exit status once it has exited or the
// target was closed.
func launch(args []string, opts target.Options) (t target.Target, wait func() int, err error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if cred := sudoCredential(); cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", args[0], err)
	}
	pt, err := ptrace.Attach(cmd.Process.Pid, opts)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, nil, err
	}
	wait = func() int {
		// The tracer may have reaped the command already (it sees the exit
		// of a traced child first); otherwise wait for it as its parent.
		if ws, known := pt.ExitStatus(); known {
			cmd.Process.Release()
			return waitStatusCode(ws)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee):
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
				return waitStatusCode(ws)
			}
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "macprof: wait for %s: %v\n", args[0], err)
		return 1
	}
	return pt, wait, nil
}

// sudoCredential returns the invoking user's credentials when macprof runs
// as root under sudo.
func sudoCredential() *syscall.Credential {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, err1 := strconv.ParseUint(os.Getenv("SUDO_UID"), 10, 32)
	gid, err2 := strconv.ParseUint(os.Getenv("SUDO_GID"), 10, 32)
	if err1 != nil || err2 != nil || uid == 0 {
		return nil
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}
