//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/macprof/macprof/target"
	"golang.org/x/sys/unix"
)

// continuousStopTimeout bounds the same wait in continuous mode, where the
// sampler waits with it and every other thread's sample waits too: five
// ticks at 99 Hz, and hundreds of times the slowest stop measured on a
// loaded machine (a few milliseconds).
const continuousStopTimeout = 50 * time.Millisecond

// checkAccess verifies, for continuous mode, that the process may be traced:
// it seizes the main thread and detaches again at once. Threads are then
// attached only for the time of each capture.
func (t *Target) checkAccess() error {
	t.stateMu.Lock()
	err := t.refreshThreads()
	t.stateMu.Unlock()
	if err != nil {
		return err
	}
	// Check with a thread that is not in uninterruptible sleep (it would
	// stop only when the sleep ends): the main thread unless it is in one.
	tid := t.pid
	var buf [512]byte
	if th, ok := t.threads[tid]; ok {
		if st, _ := th.files.state(buf[:]); st == 'D' {
			for other, oth := range t.threads {
				if st, err := oth.files.state(buf[:]); err == nil && st != 'D' {
					tid = other
					break
				}
			}
		}
	}
	if err := seize(tid, 0); err != nil {
		return attachError(t.pid, err)
	}
	if err := interrupt(tid); err == nil {
		th := &thread{tid: tid}
		if err := t.awaitStopBlocking(th); err == nil {
			detach(tid, th.detachSignal())
		} else if errors.Is(err, target.ErrStopTimeout) {
			// It entered an uninterruptible sleep since: the loop lets
			// it go once it stops.
			t.checkStuck = th
		}
	}
	return nil
}

// letGoCheckStuck lets go of the thread checkAccess attached if it has
// stopped since, and reports whether it is still attached. Loop only.
func (t *Target) letGoCheckStuck() bool {
	th := t.checkStuck
	if th == nil {
		return false
	}
	held, err := t.awaitStop(th, unix.WALL|unix.WNOHANG, time.Time{})
	switch {
	case held:
		detach(th.tid, th.detachSignal())
	case err == nil:
		return true
	}
	t.checkStuck = nil
	return false
}

// captureTransient attaches to one thread, captures it and detaches
// (continuous mode), so that no signal of the target is intercepted
// between samples.
func (t *Target) captureTransient(tid int, c *target.Capture) error {
	th, err := t.liveThread(tid)
	if err != nil {
		return err
	}
	return t.stopAndCapture(th, c)
}

// liveThread looks a thread up in the thread table from a capturing
// goroutine (continuous mode), under stateMu.
func (t *Target) liveThread(tid int) (*thread, error) {
	t.stateMu.Lock()
	th, ok := t.threads[tid]
	t.stateMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
	}
	return th, nil
}

// stopAndCapture is captureTransient for a thread already looked up.
func (t *Target) stopAndCapture(th *thread, c *target.Capture) error {
	tid := th.tid
	if _, ok := t.stuck[tid]; ok {
		// Still attached from a capture it did not stop for.
		return fmt.Errorf("thread %d: %w", tid, target.ErrStopTimeout)
	}
	// A thread in uninterruptible sleep would stop only when its wait ends:
	// skip it rather than wait.
	st, cpu, serr := th.files.stateCPU(t.capBuf[:])
	if serr == nil && st == 'D' && !t.skipBlockedCheck {
		return fmt.Errorf("thread %d: %w", tid, target.ErrThreadBlocked)
	}
	// A thread running on another CPU stops within microseconds of the
	// interrupt: wait for it without sleeping. One that shares this CPU
	// can only reach its stop once this thread sleeps.
	spin := serr == nil && st == 'R' && cpu >= 0 && cpu != getcpuRaw()

	start := time.Now()
	if err := seize(tid, 0); err != nil {
		switch {
		case errors.Is(err, unix.ESRCH):
			return fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
		case errors.Is(err, unix.EPERM) && t.dying(th):
			// The kernel refuses to attach to a thread that is exiting.
			return fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
		default:
			return fmt.Errorf("attach thread %d: %w", tid, err)
		}
	}
	if err := interrupt(tid); err != nil {
		// The thread is exiting. A traced thread that exits stays a
		// zombie until its tracer reaps it, and holds up the whole
		// process's exit meanwhile: wait for it (or for a stop, then
		// detach) before giving up on it.
		switch err := t.awaitStopBlocking(th); {
		case err == nil:
			detach(tid, th.detachSignal())
			th.held, th.heldSig, th.groupStop = false, 0, false
		case errors.Is(err, target.ErrStopTimeout):
			t.holdStuck(th)
		}
		return fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
	}
	stopped := false
	if spin {
		var err error
		if stopped, err = t.spinForStop(th); err != nil {
			return err
		}
	}
	if !stopped {
		if err := t.awaitStopBlocking(th); err != nil {
			if errors.Is(err, target.ErrStopTimeout) {
				t.holdStuck(th)
			}
			// Otherwise the thread exited and its status was consumed:
			// nothing is left attached.
			return err
		}
	}
	err := t.captureHeld(th, c)
	rerr := t.release(th)
	c.Stopped = time.Since(start)
	if rerr != nil {
		return rerr
	}
	return err
}

// release detaches a thread held for one capture (continuous mode). A
// thread killed while held (SIGKILL ends a ptrace-stop) can no longer be
// detached, and a traced thread that dies stays a zombie until its tracer
// reaps it, holding up its whole process's exit meanwhile: release reaps
// it instead (the wait ends as soon as it is dead) and reports ErrNoThread.
func (t *Target) release(th *thread) error {
	err := detach(th.tid, th.detachSignal())
	th.held, th.heldSig, th.groupStop = false, 0, false
	if !errors.Is(err, unix.ESRCH) {
		return nil
	}
	switch err := t.awaitStopBlocking(th); {
	case err == nil:
		// Stopped again rather than dead: let it go.
		detach(th.tid, th.detachSignal())
		th.held, th.heldSig, th.groupStop = false, 0, false
	case errors.Is(err, target.ErrStopTimeout):
		t.holdStuck(th)
	}
	return fmt.Errorf("thread %d: %w", th.tid, target.ErrNoThread)
}

// stopSpin bounds how long a capture polls for a thread on another CPU to
// stop before it sleeps in wait4. Measured on the project's 2-vCPU VM, a
// running thread stopped within it in 95-99% of captures when the machine
// was otherwise idle, and polling saved about 15% of the profiler's CPU per
// tick: a sleep and a wake-up of the capturing thread cost more than the
// polling.
const stopSpin = 50 * time.Microsecond

// spinForStop polls, without sleeping, for a thread attached for one
// capture to stop, for up to stopSpin. It reports whether the thread is
// held.
func (t *Target) spinForStop(th *thread) (bool, error) {
	deadline := time.Now().Add(stopSpin)
	for {
		held, err := t.awaitStop(th, unix.WALL|unix.WNOHANG, time.Time{})
		if held || err != nil || time.Now().After(deadline) {
			return held, err
		}
	}
}

// awaitStopBlocking waits in wait4 until a thread attached for one capture
// stops (continuous mode), for at most continuousStopTimeout, and returns
// ErrStopTimeout after that (see stopTimer). The caller is locked to its OS
// thread. Where the timer cannot be set up, the wait is not bounded.
func (t *Target) awaitStopBlocking(th *thread) error {
	deadline := time.Now().Add(continuousStopTimeout)
	if t.stopTimer.arm(continuousStopTimeout) != nil {
		_, err := t.awaitStop(th, unix.WALL, time.Time{})
		return err
	}
	_, err := t.awaitStop(th, unix.WALL, deadline)
	t.stopTimer.disarm()
	return err
}

// holdStuck keeps a thread that did not stop in time, to be let go once it
// has (tendStuck).
func (t *Target) holdStuck(th *thread) {
	th.tracer = gettidRaw()
	t.stuck[th.tid] = th
}

// tendStuck lets go of the stuck threads that have stopped since, and
// forgets those that have died (reaping them). Only the OS thread that
// attached a thread can detach it; the others are left for a later call
// on that thread. The caller holds hotMu and is locked to its OS thread.
func (t *Target) tendStuck() {
	if len(t.stuck) == 0 {
		return
	}
	me := gettidRaw()
	for _, th := range t.stuck {
		if th.tracer != me {
			continue
		}
		held, err := t.awaitStop(th, unix.WALL|unix.WNOHANG, time.Time{})
		t.settleStuck(th, held, err)
	}
}

// settleStuck acts on the end of a wait for a stuck thread: one that
// stopped is let go, one that died (and was reaped) forgotten; one still
// asleep (no error, or the wait timed out) stays.
func (t *Target) settleStuck(th *thread, held bool, err error) {
	switch {
	case held:
		delete(t.stuck, th.tid)
		t.release(th)
	case err != nil && !errors.Is(err, target.ErrStopTimeout):
		delete(t.stuck, th.tid)
	}
}

// letGoStuck, at Close, waits up to stopTimeout in all for the stuck
// threads this OS thread attached to stop, and lets them go. A thread still
// asleep after that (or attached from another OS thread) stays attached,
// interrupted, until the OS thread that attached it ends, when the kernel
// detaches it: for `record`, when macprof exits. The caller holds hotMu.
func (t *Target) letGoStuck() {
	defer t.stopTimer.close()
	if len(t.stuck) == 0 {
		return
	}
	runtime.LockOSThread()
	defer t.unlockOSThread()
	deadline := time.Now().Add(stopTimeout)
	me := gettidRaw()
	for _, th := range t.stuck {
		left := time.Until(deadline)
		if th.tracer != me || left <= 0 || t.stopTimer.arm(left) != nil {
			continue
		}
		held, err := t.awaitStop(th, unix.WALL, deadline)
		t.stopTimer.disarm()
		t.settleStuck(th, held, err)
	}
}

// unlockOSThread undoes the LockOSThread of a continuous capture, unless a
// thread is left stuck: the goroutine then stays on this OS thread, the
// only one that can let the thread go, until none is.
func (t *Target) unlockOSThread() {
	switch {
	case len(t.stuck) > 0 && !t.pinned:
		t.pinned = true
	case len(t.stuck) == 0 && t.pinned:
		t.pinned = false
		runtime.UnlockOSThread()
		runtime.UnlockOSThread()
	default:
		runtime.UnlockOSThread()
	}
}

// awaitStop waits in wait4 until a thread attached for one capture stops
// (continuous mode), and reports whether it is held; with WNOHANG in
// options it returns false at once when the thread has not stopped yet.
// The kernel wakes this thread the moment the tracee stops, with no signal
// delivery or goroutine hand-off in between. The wait ends when the tracee
// reaches a stop or dies: PTRACE_INTERRUPT ends interruptible sleeps at
// once, and threads seen in uninterruptible sleep are not attached (see
// captureTransient); one that enters it after that check would hold the
// wait until it leaves it, so a non-zero deadline ends the wait with
// ErrStopTimeout once a signal (the stop timer's) interrupts wait4 after
// it. It never touches the thread table, which other goroutines update in
// this mode.
func (t *Target) awaitStop(th *thread, options int, deadline time.Time) (bool, error) {
	for {
		var ws unix.WaitStatus
		got, err := wait4Raw(th.tid, &ws, options)
		if errors.Is(err, unix.EINTR) {
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return false, fmt.Errorf("thread %d: %w", th.tid, target.ErrStopTimeout)
			}
			continue
		}
		if err == nil && got == 0 && options&unix.WNOHANG != 0 {
			return false, nil
		}
		if err != nil || got == 0 {
			return false, fmt.Errorf("thread %d: %w", th.tid, target.ErrNoThread)
		}
		if !ws.Stopped() {
			if got == t.pid && (ws.Exited() || ws.Signaled()) {
				// Our own child (launch mode) reaped here: keep its
				// status for ExitStatus.
				t.statusMu.Lock()
				t.exitStatus, t.exitKnown = ws, true
				t.statusMu.Unlock()
			}
			return false, fmt.Errorf("thread %d: %w", th.tid, target.ErrNoThread)
		}
		th.held, th.heldSig, th.groupStop = true, 0, false
		sig, ev := ws.StopSignal(), ws.TrapCause()
		switch {
		case ev == unix.PTRACE_EVENT_STOP && sig != unix.SIGTRAP:
			th.groupStop = true
		case ev == 0:
			// Seized without options, a thread reports no exec or
			// clone traps: every stop without an event is a signal's
			// delivery, SIGTRAP included, and the signal is handed back.
			th.heldSig = int(sig)
		}
		return true, nil
	}
}

// initialStackCopy is the first bulk copy of a thread's stack in continuous
// mode. Most stacks (goroutines, callbacks, worker loops) fit in it, and a
// smaller copy keeps the thread stopped for less time: the copy grows for
// threads whose walks go further.
const initialStackCopy = 8 << 10

// copyLimit returns how many bytes of the thread's stack to copy, at most
// max. A snapshot copies all it may; continuous sampling starts with
// initialStackCopy and grows it for this thread when a walk had to read
// past the copy.
func (th *thread) copyLimit(max int, continuous bool) int {
	if !continuous {
		return max
	}
	return min(th.stackCopy(), max)
}

// growCopy doubles the thread's stack copy, up to max, after a walk that
// read frame records past it.
func (th *thread) growCopy(max int) { th.copyBytes = min(2*th.stackCopy(), max) }

// stackCopy is the thread's current stack copy size in continuous mode.
func (th *thread) stackCopy() int {
	if th.copyBytes == 0 {
		return initialStackCopy
	}
	return th.copyBytes
}
