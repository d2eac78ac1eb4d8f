//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/macprof/macprof/internal/procstat"
	"github.com/macprof/macprof/target"
	"golang.org/x/sys/unix"
)

// attachError explains why PTRACE_SEIZE of a process failed and what to do.
func attachError(pid int, err error) error {
	name := readComm(pid, pid)
	what := fmt.Sprintf("PID %d", pid)
	if name != "" {
		what = fmt.Sprintf("PID %d (%s)", pid, name)
	}
	switch {
	case errors.Is(err, unix.ESRCH):
		return fmt.Errorf("cannot attach to %s: it exited (%w)", what, target.ErrExited)
	case errors.Is(err, unix.EPERM) && exitedProcess(pid):
		// The kernel refuses a thread that has exited (exit_state set)
		// with EPERM, as it refuses a forbidden one.
		return fmt.Errorf("cannot attach to %s: it exited (%w)", what, target.ErrExited)
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("cannot attach to %s: %w: %s", what, err, permissionAdvice(pid))
	}
	return fmt.Errorf("cannot attach to %s: %w", what, err)
}

// permissionAdvice says why ptrace may be refused for pid.
func permissionAdvice(pid int) string {
	var why []string
	if v, err := procStatusField(pid, "TracerPid"); err == nil && v != "0" {
		tpid := tracerProcess(v)
		why = append(why, fmt.Sprintf("it is already being traced by PID %d (%s); a process can have only one tracer (a debugger, strace or another profiler): stop that one first", tpid, readComm(tpid, tpid)))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil {
		switch strings.TrimSpace(string(b)) {
		case "1":
			if os.Geteuid() != 0 {
				why = append(why, "kernel.yama.ptrace_scope is 1, so only a parent may trace its children: run macprof as root (sudo), give it CAP_SYS_PTRACE (setcap cap_sys_ptrace+ep macprof), let macprof launch the program (macprof record -- CMD), or set 'sysctl kernel.yama.ptrace_scope=0'")
			}
		case "2":
			why = append(why, "kernel.yama.ptrace_scope is 2, so only processes with CAP_SYS_PTRACE may trace: run macprof as root or with CAP_SYS_PTRACE")
		case "3":
			why = append(why, "kernel.yama.ptrace_scope is 3, so ptrace is disabled on this machine until reboot")
		}
	}
	if uid, err := procStatusField(pid, "Uid"); err == nil {
		f := strings.Fields(uid)
		if len(f) > 0 && f[0] != fmt.Sprint(os.Geteuid()) && os.Geteuid() != 0 {
			why = append(why, fmt.Sprintf("it runs as user %s and macprof as user %d: run macprof as root or as that user", f[0], os.Geteuid()))
		}
	}
	if len(why) == 0 {
		why = append(why, "the kernel refused ptrace (the target may be non-dumpable, or a security module such as SELinux/AppArmor or a seccomp filter denies it); running as root with CAP_SYS_PTRACE usually helps")
	}
	return strings.Join(why, "; ")
}

// exitSettle bounds how long exitedProcess waits for the threads of a
// process whose main thread has exited to show that they are exiting too.
const exitSettle = 200 * time.Millisecond

// pfExiting is the kernel's PF_EXITING task flag (include/linux/sched.h):
// the thread is in do_exit.
const pfExiting = 0x4

// exitedProcess reports whether pid has exited or is exiting: it is gone,
// or its main thread has exited and every other thread has too or is on
// its way (in do_exit, or with SIGKILL pending, which a group exit sends
// every thread). A main thread that ended alone leaves the others running,
// which is not an exit.
func exitedProcess(pid int) bool {
	deadline := time.Now().Add(exitSettle)
	for {
		if !taskGoing(pid, pid, true) {
			return false
		}
		tids, err := listTasks(pid)
		if err != nil {
			return true
		}
		going := true
		for _, tid := range tids {
			going = going && taskGoing(pid, tid, false)
		}
		// (A thread between taking its SIGKILL and entering do_exit
		// shows neither for a moment.)
		if going || time.Now().After(deadline) {
			return going
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// taskEnded reports whether thread tid of pid has exited (a zombie, dead,
// or gone): ptrace can no longer attach it.
func taskEnded(pid, tid int) bool { return taskGoing(pid, tid, true) }

// taskGoing reports whether thread tid of pid has exited or, unless
// endedOnly, is exiting.
func taskGoing(pid, tid int, endedOnly bool) bool {
	s, err := procstat.ReadTask(pid, tid)
	switch {
	case err != nil || !s.Has(procstat.FieldFlags) || s.State == 'Z' || s.State == 'X':
		return true
	case endedOnly:
		return false
	case s.Flags&pfExiting != 0:
		return true
	}
	pnd, err := procStatusField(tid, "SigPnd")
	if err != nil {
		return true
	}
	mask, err := strconv.ParseUint(pnd, 16, 64)
	return err == nil && mask&(1<<(unix.SIGKILL-1)) != 0
}
