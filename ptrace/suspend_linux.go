//go:build linux && (amd64 || arm64)

package ptrace

import (
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SIGTSTP (Ctrl-Z) stops macprof, and a target thread held in a capture
// would stay stopped for as long as macprof does. So while any target is
// open, macprof catches SIGTSTP, waits for every capture under way to end
// and takes every target's capture lock, then stops itself with SIGSTOP and
// lets the captures go on once continued; it first gives the captures time
// to let go of threads that were slow to stop, unless they sleep in the
// kernel (such a thread is held if its sleep ends while macprof is
// stopped). SIGSTOP cannot be caught: it can
// stop macprof in the middle of a capture, and that one thread (every
// thread of a snapshot, whose capture stops them all) stays held until
// macprof is continued; between captures nothing is held but a thread
// that was slow to stop, which the next tick lets go.

// suspender is the set of open targets and whether SIGTSTP is caught.
var suspender struct {
	mu       sync.Mutex
	targets  map[*Target]struct{}
	catching bool
}

// suspendable adds t to the targets that a SIGTSTP waits for, and starts
// catching SIGTSTP unless it is ignored (then it never stops macprof).
func suspendable(t *Target) {
	suspender.mu.Lock()
	defer suspender.mu.Unlock()
	if suspender.targets == nil {
		suspender.targets = make(map[*Target]struct{})
	}
	suspender.targets[t] = struct{}{}
	if !suspender.catching && !signal.Ignored(syscall.SIGTSTP) {
		suspender.catching = true
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTSTP)
		go suspendOnTSTP(ch)
	}
}

// unsuspendable removes t from them. The caller must not hold t.hotMu.
func unsuspendable(t *Target) {
	suspender.mu.Lock()
	delete(suspender.targets, t)
	suspender.mu.Unlock()
}

// suspendOnTSTP stops macprof for each SIGTSTP, once no capture is under
// way, and holds every capture until it is continued.
func suspendOnTSTP(ch <-chan os.Signal) {
	for range ch {
		suspender.mu.Lock()
		for deadline := time.Now().Add(stuckGrace); ; time.Sleep(time.Millisecond) {
			stuck := false
			for t := range suspender.targets {
				t.hotMu.Lock()
				stuck = stuck || t.stoppingStuck()
			}
			if !stuck || time.Now().After(deadline) {
				break
			}
			// A thread slow to stop may have stopped since: only
			// the capturing goroutine can let it go, at its next
			// tick.
			for t := range suspender.targets {
				t.hotMu.Unlock()
			}
		}
		stopSelf()
		for t := range suspender.targets {
			t.hotMu.Unlock()
		}
		suspender.mu.Unlock()
	}
}

// stuckGrace bounds how long a SIGTSTP waits for the captures to let go of
// threads that were slow to stop: far more than a runnable thread waits
// for a CPU on a loaded machine.
const stuckGrace = time.Second

// stoppingStuck reports whether a thread that was slow to stop has stopped
// or is about to (it is not in an uninterruptible sleep, which may last for
// ever): the capturing goroutine lets it go at its next tick. The caller
// holds hotMu.
func (t *Target) stoppingStuck() bool {
	if t.stop == nil {
		return false
	}
	for _, th := range t.stop.stuck {
		if st, err := th.files.state(t.stop.buf[:]); err == nil && st != 'D' && st != 'Z' && st != 'X' {
			return true
		}
	}
	return false
}

// stopSelf stops macprof with SIGSTOP sent to the calling thread, which
// stops on its way out of the system call: it returns once continued.
func stopSelf() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	unix.Tgkill(os.Getpid(), unix.Gettid(), unix.SIGSTOP)
}
