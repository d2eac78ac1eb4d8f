package machtest

import (
	"fmt"
	"slices"
	"syscall"

	"github.com/macprof/macprof/mach"
)

// ProcPIDPath follows libsyscall wrappers/libproc/libproc.c proc_pidpath:
// the path's length, or 0 on any error.
func (k *Kernel) ProcPIDPath(pid int, buf []byte) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.tasks[pid]
	if t == nil || t.reaped || t.HidePath {
		return 0
	}
	return copy(buf, t.Path)
}

// SysctlUint32 answers sysctl.proc_translated (bsd/kern/kern_sysctl.c
// sysctl_translated: 1 for a process run by Rosetta) and
// machdep.virtual_address_size (absent on Intel).
func (k *Kernel) SysctlUint32(name string) (uint32, bool) {
	switch name {
	case "sysctl.proc_translated":
		if k.ProfilerTranslated {
			return 1, true
		}
		return 0, true
	case "machdep.virtual_address_size":
		return k.VABits, k.VABits != 0
	}
	return 0, false
}

// ProcFlags answers kern.proc.pid.PID's p_flag (bsd/sys/proc.h
// P_TRANSLATED for a Rosetta process); ESRCH when there is no process.
func (k *Kernel) ProcFlags(pid int) (int32, syscall.Errno) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.tasks[pid]
	if t == nil || t.reaped {
		return 0, syscall.ESRCH
	}
	if t.FlagsErr != 0 {
		return 0, t.FlagsErr
	}
	if t.Translated {
		return mach.PTranslated, 0
	}
	return 0, 0
}

// Spawn follows bsd/kern/kern_exec.c posix_spawn with
// POSIX_SPAWN_START_SUSPENDED: the new task is held
// (task_suspend_internal) and its dyld has not run: TASK_DYLD_INFO points
// at the on-disk dyld's dyld_all_image_infos (kern_exec.c
// task_set_dyld_info from the load result), whose infoArray is still NULL.
// The images of the task come from Launchable.
func (k *Kernel) Spawn(path string, argv, env []string, cred *mach.SpawnCred) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if cred != nil && k.EUID != 0 {
		// kern_exec.c posix_spawn: "if (!kauth_cred_issuser(kauth_cred_get()))
		// { error = EPERM; goto bad; }" for posix_cred_info.
		return 0, syscall.EPERM
	}
	if cred != nil && (len(cred.Groups) == 0 || len(cred.Groups) > 16) {
		// posix_spawnattr_set_groups_np: EINVAL for more than NGROUPS
		// (libsyscall wrappers/spawn/posix_spawn.c).
		return 0, syscall.EINVAL
	}
	l := k.launchable[path]
	if l == nil {
		return 0, syscall.ENOENT
	}
	t := l(k)
	t.Env = slices.Clone(env)
	// spawn_posix_cred_adopt (kern_exec.c) runs setgid, setgroups and
	// setuid on the child before its exec; without cred the child keeps
	// the caller's credentials.
	t.Cred = mach.SpawnCred{UID: k.EUID, GID: k.EGID, GMUID: k.EUID, Groups: []int{k.EGID}}
	if cred != nil {
		t.Cred = *cred
		t.Cred.Groups = slices.Clone(cred.Groups)
	}
	t.stopped = true
	t.holds++
	return t.PID, nil
}

// Geteuid implements mach.Kernel.
func (k *Kernel) Geteuid() int { return k.EUID }

// Getenv implements mach.Kernel from Env.
func (k *Kernel) Getenv(key string) string { return k.Env[key] }

// LookupUser implements mach.Kernel from Users.
func (k *Kernel) LookupUser(uid int) (mach.UserInfo, error) {
	u, ok := k.Users[uid]
	if !ok {
		return mach.UserInfo{}, fmt.Errorf("user: unknown userid %d", uid)
	}
	u.Groups = slices.Clone(u.Groups)
	return u, nil
}

// Kill follows bsd/kern/kern_sig.c kill: ESRCH for no process (a zombie
// still counts until reaped), signal 0 only checks; SIGCONT releases the
// hold of a stopped task (kern_sig.c psignal_internal: task_resume_internal
// when it was SSTOP), and SIGKILL ends it.
func (k *Kernel) Kill(pid int, sig syscall.Signal) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.tasks[pid]
	if t == nil || t.reaped {
		return syscall.ESRCH
	}
	switch sig {
	case 0:
	case syscall.SIGCONT:
		if t.stopped {
			t.stopped = false
			t.holds--
			t.continued(k.step)
		}
	case syscall.SIGKILL:
		t.exit(syscall.WaitStatus(uint32(syscall.SIGKILL)))
	case syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM:
		// Their default action ends the process (kern_sig.c sigprop:
		// SA_KILL); the modelled programs install no handler.
		if !t.stopped {
			t.exit(syscall.WaitStatus(uint32(sig)))
		}
	}
	return nil
}

// Wait4 waits for the task to exit and reaps it (bsd/kern/kern_exit.c
// wait4: ECHILD for a process that is not a child or already reaped).
func (k *Kernel) Wait4(pid int) (syscall.WaitStatus, error) {
	k.mu.Lock()
	t := k.tasks[pid]
	if t == nil || t.reaped || !t.child {
		k.mu.Unlock()
		return 0, syscall.ECHILD
	}
	k.mu.Unlock()
	<-t.exited
	k.mu.Lock()
	defer k.mu.Unlock()
	// The process's task of the moment: an exec (Exec) gave it another.
	t = k.tasks[pid]
	t.reaped = true
	return t.status, nil
}
