//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"os"
	"strings"

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
		return fmt.Errorf("cannot attach to %s: it exited", what)
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
