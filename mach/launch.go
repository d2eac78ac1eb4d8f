package mach

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
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
	cred, u, err := InvokingUser(k)
	if err != nil {
		return nil, fmt.Errorf("launch %s: %w", argv[0], err)
	}
	if cred != nil {
		env = userEnv(env, u)
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
// sudo (euid 0, SUDO_UID set and not 0) the user who ran sudo, with
// SUDO_GID as its group and that user's groups, so that the command does
// not run as root; nil (macprof's own credentials) otherwise. SUDO_UID or
// SUDO_GID that are set but unusable (not numbers, an unknown user, a
// group the user is not in) are an error: running the command as root
// instead would be a silent surprise.
func InvokingUser(k Kernel) (*SpawnCred, *UserInfo, error) {
	su, sg := k.Getenv("SUDO_UID"), k.Getenv("SUDO_GID")
	if k.Geteuid() != 0 || (su == "" && sg == "") {
		return nil, nil, nil
	}
	const unset = "; unset SUDO_UID and SUDO_GID to run the command as root"
	uid, err := strconv.ParseUint(su, 10, 32)
	if err != nil {
		return nil, nil, fmt.Errorf("under sudo: SUDO_UID %q is not a user id"+unset, su)
	}
	gid, err := strconv.ParseUint(sg, 10, 32)
	if err != nil {
		return nil, nil, fmt.Errorf("under sudo: SUDO_GID %q is not a group id"+unset, sg)
	}
	if uid == 0 {
		return nil, nil, nil
	}
	u, err := k.LookupUser(int(uid))
	if err != nil {
		return nil, nil, fmt.Errorf("under sudo: look up user %d (SUDO_UID): %w", uid, err)
	}
	// sudo sets SUDO_GID to the user's own group; another (SUDO_GID=0 in
	// an environment the user wrote) would run the command with a group
	// the user does not have.
	if int(gid) != u.GID && !slices.Contains(u.Groups, int(gid)) {
		return nil, nil, fmt.Errorf("under sudo: SUDO_GID %d is not a group of user %d (SUDO_UID)"+unset, gid, uid)
	}
	// SUDO_GID first, then the user's other groups up to NGROUPS: the
	// kernel asks the directory service about the rest, GMUID being the
	// user, as initgroups(3) (Libinfo lookup.subproj/libinfo.c) does.
	gs := []int{int(gid)}
	for _, g := range u.Groups {
		if len(gs) < ngroups && !slices.Contains(gs, g) {
			gs = append(gs, g)
		}
	}
	return &SpawnCred{UID: int(uid), GID: int(gid), GMUID: int(uid), Groups: gs}, &u, nil
}

// userEnv returns env with HOME, USER and LOGNAME set to u's, as a login
// as that user would have them.
func userEnv(env []string, u *UserInfo) []string {
	set := map[string]string{"HOME": u.Home, "USER": u.Name, "LOGNAME": u.Name}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); set[k] == "" {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"HOME", "USER", "LOGNAME"} {
		if set[k] != "" {
			out = append(out, k+"="+set[k])
		}
	}
	return out
}
