package ptrace

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/macprof/macprof/target"
	"golang.org/x/sys/unix"
)

// Launched is a command Launch started and attached to.
type Launched struct {
	*Target
	cmd      *exec.Cmd
	release  func() // lets the thread that started cmd exit
	released sync.Once
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
	su, err := sudoUser(os.Geteuid(), os.Getenv, lookupUser)
	if err != nil {
		return nil, err
	}
	// The kernel kills the command when the thread that started it
	// exits, so a SIGKILLed macprof does not leave it running unprofiled.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if su != nil {
		cmd.SysProcAttr.Credential = su.cred
		cmd.Env = su.env(os.Environ())
	}
	withRings := cmd.Err == nil && processRingsFit(cmd.Path, opts)
	kidRings := cmd.Err == nil && !withRings && descendantRingsFit(opts)
	if withRings || kidRings {
		// Stopped at its exec, so that its events are open, and macprof
		// ready, before it runs (processrings_linux.go).
		cmd.SysProcAttr.Ptrace = true
	}
	held, err := startOnHeldThread(cmd)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", args[0], err)
	}
	pid := cmd.Process.Pid
	fail := func(err error) (*Launched, error) {
		cmd.Process.Kill()
		cmd.Wait()
		held.release()
		return nil, err
	}
	var rings *processRings
	if withRings || kidRings {
		if err := held.do(func() (err error) { rings, err = openAtExec(pid, opts, kidRings); return err }); err != nil {
			return fail(fmt.Errorf("start %s: %w", args[0], err))
		}
	}
	t, err := attach(pid, opts, rings != nil)
	if err != nil && exitedChild(pid) {
		// It ended before it could be attached (`true`): its status is
		// still ours to wait for, and its profile is empty.
		t, err = exitedTarget(pid, opts)
	}
	if err != nil {
		if rings != nil {
			rings.close()
		}
		return fail(err)
	}
	if rings != nil {
		// Its images and unwind tables are read before it runs, not
		// while it does.
		if kidRings {
			t.useDescendantRings(rings)
		} else {
			t.useProcessRings(rings)
		}
		t.Images()
		t.PrepareUnwind()
		if err := held.do(func() error { return unix.PtraceDetach(pid) }); err != nil {
			t.Close()
			return fail(fmt.Errorf("start %s: let it run after its exec: %w", args[0], err))
		}
	}
	return &Launched{Target: t, cmd: cmd, release: held.release}, nil
}

// openAtExec waits for pid, a child started with PTRACE_TRACEME by the
// calling thread, to stop at its exec, and opens its process rings there
// (descendant rings with kidsOnly).
// It leaves the child stopped, unless the kernel refuses the rings: then
// it lets it go and returns nil rings, and the command is sampled thread by
// thread. An error is a child that could not be stopped or let go.
func openAtExec(pid int, opts target.Options, kidsOnly bool) (*processRings, error) {
	for stops := 0; ; stops++ {
		if stops > 16 {
			return nil, errors.New("it stopped 16 times for signals before its exec")
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, 0, nil); errors.Is(err, unix.EINTR) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("wait for its exec: %w", err)
		}
		if !ws.Stopped() {
			return nil, fmt.Errorf("it ended at its exec (status %#x)", uint32(ws))
		}
		if ws.StopSignal() == unix.SIGTRAP {
			break
		}
		// A signal that came between PTRACE_TRACEME and the exec
		// stops it first: it is passed on, and the exec awaited.
		if err := unix.PtraceCont(pid, int(ws.StopSignal())); err != nil {
			return nil, fmt.Errorf("pass on signal %v before its exec: %w", ws.StopSignal(), err)
		}
	}
	opts = opts.WithDefaults()
	stack := 0
	if kidsOnly {
		// Children of a command not sampled by frame records alone
		// (C, Python) may be built without frame pointers too: their
		// stacks are copied, twice perf's 8 KiB, which Python's
		// imports outgrow (a copy cannot grow per child).
		stack = 2 * perfStackBytes
	}
	rings, err := openProcessRings(pid, opts.Kernel.Period.Nanoseconds(), int64(opts.MaxFrames), kidsOnly, stack)
	if err == nil {
		return rings, nil
	}
	// The stop is its exec's SIGTRAP, which is not passed on.
	if err := unix.PtraceDetach(pid); err != nil {
		return nil, fmt.Errorf("let it run after its exec: %w", err)
	}
	return nil, nil
}

// heldThread is the OS thread a command was started from, which lives
// until release. PR_SET_PDEATHSIG fires when the creating thread exits,
// not the process (prctl(2)), and Go may end or reuse any unlocked thread:
// a thread locked for the command's life ties the signal to macprof's
// death. It is also the only thread that may trace a command started with
// Ptrace set, so do runs calls on it.
type heldThread struct {
	calls   chan func() error
	results chan error
	done    chan struct{}
	once    sync.Once
}

// startOnHeldThread starts cmd from a new held thread.
func startOnHeldThread(cmd *exec.Cmd) (*heldThread, error) {
	h := &heldThread{calls: make(chan func() error), results: make(chan error), done: make(chan struct{})}
	started := make(chan error)
	go func() {
		// Never unlocked: the thread exits with this goroutine, after
		// release, when the command is gone.
		runtime.LockOSThread()
		err := cmd.Start()
		started <- err
		if err != nil {
			return
		}
		for {
			select {
			case f := <-h.calls:
				h.results <- f()
			case <-h.done:
				return
			}
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return h, nil
}

// do runs f on the held thread and returns its error.
func (h *heldThread) do(f func() error) error {
	h.calls <- f
	return <-h.results
}

// release lets the held thread exit.
func (h *heldThread) release() { h.once.Do(func() { close(h.done) }) }

// exitedChild reports whether the child pid has exited, without reaping it:
// a child no longer there to wait for (reaped already) has too.
func exitedChild(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return errors.Is(err, unix.ECHILD) || err == nil && siginfoPID(&info) == pid
}

// Signal sends sig to the command through the process handle that started
// it (a pidfd: never to a process that reused its PID).
func (l *Launched) Signal(sig os.Signal) error { return l.cmd.Process.Signal(sig) }

// Wait waits for the command to exit and returns the status to forward.
// The tracer may have reaped it already (it sees a traced child's exit
// first); otherwise it is waited for as macprof's child.
func (l *Launched) Wait() int {
	defer l.released.Do(l.release)
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

// sudoIdentity is the user who ran macprof through sudo, as whom a launched
// command runs.
type sudoIdentity struct {
	cred *syscall.Credential
	home string
	name string
}

// sudoUser returns the invoking user when macprof runs as root under sudo
// (SUDO_UID set and not 0), with their supplementary groups and home, or
// nil when it does not. SUDO_UID or SUDO_GID that are set but unusable are
// an error: running the command as root instead would be a silent surprise.
func sudoUser(euid int, getenv func(string) string, lookup func(uid string) (*account, []string, error)) (*sudoIdentity, error) {
	suid, sgid := getenv("SUDO_UID"), getenv("SUDO_GID")
	if euid != 0 || (suid == "" && sgid == "") {
		return nil, nil
	}
	uid, err := strconv.ParseUint(suid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("launch under sudo: SUDO_UID %q is not a user id; unset SUDO_UID and SUDO_GID to run the command as root", suid)
	}
	gid, err := strconv.ParseUint(sgid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("launch under sudo: SUDO_GID %q is not a group id; unset SUDO_UID and SUDO_GID to run the command as root", sgid)
	}
	if uid == 0 {
		return nil, nil
	}
	u, groups, err := lookup(suid)
	if err != nil {
		return nil, fmt.Errorf("launch under sudo: look up user %d (SUDO_UID): %w", uid, err)
	}
	id := &sudoIdentity{cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, home: u.home, name: u.name}
	for _, g := range groups {
		n, err := strconv.ParseUint(g, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("launch under sudo: user %d has group %q, not a group id", uid, g)
		}
		id.cred.Groups = append(id.cred.Groups, uint32(n))
	}
	// sudo sets SUDO_GID to the user's own group; another (SUDO_GID=0 in
	// an environment the user wrote) would run the command with a group
	// the user does not have.
	if strconv.FormatUint(gid, 10) != u.gid && !slices.Contains(id.cred.Groups, uint32(gid)) {
		return nil, fmt.Errorf("launch under sudo: SUDO_GID %d is not a group of user %d (SUDO_UID); unset SUDO_UID and SUDO_GID to run the command as root", gid, uid)
	}
	return id, nil
}

// account is a user's name, primary group id and home directory.
type account struct{ name, gid, home string }

// lookupUser returns the user uid names and the ids of their groups, as
// the system's name services (NSS: files, LDAP, sssd) know them, through
// getent and id: os/user would do the same only through cgo, which would
// make every macprof command load libc and start slower.
func lookupUser(uid string) (*account, []string, error) {
	out, err := exec.Command("getent", "passwd", uid).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
			return nil, nil, fmt.Errorf("no user has uid %s", uid)
		}
		return nil, nil, fmt.Errorf("getent passwd %s: %w", uid, err)
	}
	u, err := parsePasswd(string(out), uid)
	if err != nil {
		return nil, nil, err
	}
	out, err = exec.Command("id", "-G", "--", u.name).Output()
	if err != nil {
		return nil, nil, fmt.Errorf("groups of %s: id -G: %w", u.name, err)
	}
	return u, strings.Fields(string(out)), nil
}

// parsePasswd reads the passwd entry of uid from getent's output
// (name:password:uid:gid:gecos:home:shell).
func parsePasswd(out, uid string) (*account, error) {
	line, _, _ := strings.Cut(out, "\n")
	f := strings.Split(line, ":")
	if len(f) != 7 || f[2] != uid || f[0] == "" {
		return nil, fmt.Errorf("getent passwd %s: not a passwd entry of that uid: %q", uid, line)
	}
	return &account{name: f[0], gid: f[3], home: f[5]}, nil
}

// env returns environ with HOME (and USER, LOGNAME) set to the user's, as
// a login as that user would have them.
func (id *sudoIdentity) env(environ []string) []string {
	set := map[string]string{"HOME": id.home, "USER": id.name, "LOGNAME": id.name}
	out := make([]string, 0, len(environ)+len(set))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
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
