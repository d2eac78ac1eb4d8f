package mach

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"

	"github.com/macprof/macprof/target"
)

// LaunchKernel starts a command suspended (posix_spawn with
// POSIX_SPAWN_START_SUSPENDED, since a forked Go process cannot safely run
// code before exec), attaches to it, then sends SIGCONT, so that no
// instruction of it runs unobserved. The command inherits macprof's stdio,
// environment (env nil) and credentials, except under sudo, where it runs
// as the user who ran sudo (see InvokingUser); if the attach fails it is
// killed and reaped. The Target reaps it when it exits; Wait and
// ExitStatus report how.
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
	cred, err := InvokingUser(k)
	if err != nil {
		return nil, fmt.Errorf("launch %s: %w", argv[0], err)
	}
	pid, err := k.Spawn(path, argv, env, cred)
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

// ngroups is NGROUPS (<sys/param.h>): posix_spawnattr_set_groups_np takes
// at most that many groups.
const ngroups = 16

// InvokingUser returns who a command macprof launches should run as: under
// sudo (euid 0 and SUDO_UID set) the user who ran sudo, with SUDO_GID as
// its primary group and that user's groups, so that the command does not
// run as root; nil (macprof's own credentials) otherwise, and when
// SUDO_UID is 0. SUDO_GID must be one of the user's groups: anything else
// is refused rather than guessed.
func InvokingUser(k Kernel) (*SpawnCred, error) {
	if k.Geteuid() != 0 {
		return nil, nil
	}
	su, sg := k.Getenv("SUDO_UID"), k.Getenv("SUDO_GID")
	if su == "" {
		return nil, nil
	}
	uid, err := strconv.ParseUint(su, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("SUDO_UID=%q is not a user ID", su)
	}
	if uid == 0 {
		return nil, nil
	}
	gid, err := strconv.ParseUint(sg, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("SUDO_GID=%q is not a group ID (SUDO_UID=%d)", sg, uid)
	}
	groups, err := k.UserGroups(int(uid))
	if err != nil {
		return nil, fmt.Errorf("the groups of user %d (SUDO_UID), to run the command as that user: %w", uid, err)
	}
	if !slices.Contains(groups, int(gid)) {
		return nil, fmt.Errorf("SUDO_GID=%d is not a group of user %d (SUDO_UID): not guessing whom to run the command as", gid, uid)
	}
	// The primary group first, as getgrouplist gives it; the kernel
	// resolves membership beyond the first NGROUPS through GMUID.
	gs := []int{int(gid)}
	for _, g := range groups {
		if g != int(gid) && len(gs) < ngroups {
			gs = append(gs, g)
		}
	}
	return &SpawnCred{UID: int(uid), GID: int(gid), GMUID: int(uid), Groups: gs}, nil
}
