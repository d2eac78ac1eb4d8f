package ptrace

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/macprof/macprof/target"
	"golang.org/x/sys/unix"
)

// Launched is a command Launch started and attached to.
type Launched struct {
	*Target
	cmd *exec.Cmd
}

var _ target.Launched = (*Launched)(nil)

// Launch starts a command with macprof's standard input, output and error
// and attaches to it. Under sudo it runs as the invoking user, so that
// profiling a command does not run it as root.
func Launch(args []string, opts target.Options) (*Launched, error) {
	if len(args) == 0 {
		return nil, errors.New("launch: no command")
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if cred := sudoCredential(); cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", args[0], err)
	}
	t, err := Attach(cmd.Process.Pid, opts)
	if err != nil && exitedChild(cmd.Process.Pid) {
		// It ended before it could be attached (`true`): its status is
		// still ours to wait for, and its profile is empty.
		t, err = exitedTarget(cmd.Process.Pid, opts)
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	return &Launched{Target: t, cmd: cmd}, nil
}

// exitedChild reports whether the child pid has exited, without reaping it.
func exitedChild(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err == nil && siginfoPID(&info) == pid
}

// Wait waits for the command to exit and returns the status to forward.
// The tracer may have reaped it already (it sees a traced child's exit
// first); otherwise it is waited for as macprof's child.
func (l *Launched) Wait() int {
	if ws, known := l.ExitStatus(); known {
		l.cmd.Process.Release()
		return target.ExitCode(ws)
	}
	err := l.cmd.Wait()
	if ws, known := l.ExitStatus(); err != nil && known {
		// Reaped by the tracer while this waited (a stuck thread's
		// reaper can reap the leader): the status is the tracer's.
		return target.ExitCode(ws)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			return target.ExitCode(ws)
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "macprof: wait for %s: %v\n", l.cmd.Path, err)
	return 1
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
