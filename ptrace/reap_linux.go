//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Reaping the stuck threads (continuous mode). A traced thread that dies
// stays a zombie until its tracer waits for it, and holds up its whole
// process's reaping meanwhile. Only the OS thread that attached a stuck
// thread can detach it, but any thread of macprof can reap it (wait4 sees
// the tracees of every thread in the group): so dead stuck threads are
// reaped on every listing, from whichever goroutine lists, and those still
// attached at Close are handed to one background reaper.

// si_code values of a SIGCHLD siginfo.
const (
	cldExited = 1
	cldKilled = 2
	cldDumped = 3
)

// siginfoPID returns si_pid of a SIGCHLD siginfo (after si_signo, si_errno,
// si_code and padding).
func siginfoPID(info *unix.Siginfo) int {
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), 16)))
}

// siginfoCode returns si_code of a siginfo.
func siginfoCode(info *unix.Siginfo) int32 {
	return *(*int32)(unsafe.Add(unsafe.Pointer(info), 8))
}

// reapIfDead reaps tid if it is a dead tracee (or child) of this process,
// keeping the target's exit status, and reports whether it is gone: reaped
// now, or no longer ours to wait for. A thread in a ptrace-stop is not
// touched (only its tracer thread may detach it): the wait only peeks.
func (t *Target) reapIfDead(tid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, tid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
	if errors.Is(err, unix.ECHILD) {
		return true
	}
	if err != nil || siginfoPID(&info) != tid {
		return false
	}
	switch siginfoCode(&info) {
	case cldExited, cldKilled, cldDumped:
	default:
		return false
	}
	var ws unix.WaitStatus
	if got, err := wait4Raw(tid, &ws, unix.WALL|unix.WNOHANG); err == nil && got == tid {
		t.noteExit(got, ws)
		return true
	}
	return false
}

// tendStuckAnywhere lets go of the stuck threads that stopped since, when
// called on the OS thread that attached them, and reaps those that died,
// from any thread, so that a dead thread never waits for a capture to be
// reaped (an idle zombie gets none). It does nothing while a capture runs
// (the capture tends them itself). Continuous mode only.
func (t *Target) tendStuckAnywhere() {
	if !t.hotMu.TryLock() {
		return
	}
	defer t.hotMu.Unlock()
	if len(t.stop.stuck) == 0 {
		return
	}
	runtime.LockOSThread()
	defer t.unlockOSThread()
	t.tendStuck()
	for tid := range t.stop.stuck {
		if t.reapIfDead(tid) {
			delete(t.stop.stuck, tid)
		}
	}
}

// orphanPoll is how often the background reaper looks at the stuck
// threads left attached by closed targets: about a tick at the usual rates.
const orphanPoll = 10 * time.Millisecond

// orphan is a stuck thread left attached when its target was closed.
type orphan struct {
	t   *Target
	tid int
}

// orphans is the background reaper's list; the reaper runs while it is not
// empty.
var orphans struct {
	mu      sync.Mutex
	list    []orphan
	running bool
}

// adoptOrphans hands the threads still stuck at Close to the background
// reaper, which reaps each as soon as it dies (its process ending, most
// often) and forgets it once it is no longer attached (its tracer thread
// ended). The caller holds hotMu.
func (t *Target) adoptOrphans() {
	if len(t.stop.stuck) == 0 {
		return
	}
	orphans.mu.Lock()
	defer orphans.mu.Unlock()
	for tid := range t.stop.stuck {
		orphans.list = append(orphans.list, orphan{t: t, tid: tid})
	}
	if !orphans.running {
		orphans.running = true
		go reapOrphans()
	}
}

// reapOrphans polls the orphans until none is left.
func reapOrphans() {
	for {
		time.Sleep(orphanPoll)
		orphans.mu.Lock()
		left := orphans.list[:0]
		for _, o := range orphans.list {
			if !o.t.reapIfDead(o.tid) {
				left = append(left, o)
			}
		}
		clear(orphans.list[len(left):])
		orphans.list = left
		if len(left) == 0 {
			orphans.running = false
			orphans.mu.Unlock()
			return
		}
		orphans.mu.Unlock()
	}
}
