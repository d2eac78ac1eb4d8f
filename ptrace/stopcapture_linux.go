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

// Stop-per-capture (continuous mode): a capture seizes its thread,
// interrupts it, waits in wait4 until it stops, captures it and detaches,
// so that nothing of the target is traced between samples. Any OS thread
// can be the tracer for one capture, so captures run on the caller's
// goroutine, locked to its OS thread for the capture, with raw system
// calls.

// continuousStopTimeout bounds the wait for one thread to stop in
// continuous mode (stopTimeout in persistent mode), where the sampler waits
// with it and every other thread's sample waits too: a few ticks, and far
// longer than a thread takes to stop on a loaded machine.
const continuousStopTimeout = 50 * time.Millisecond

// stopCapture is the state of stop-per-capture, used under hotMu.
type stopCapture struct {
	// timer bounds the wait for a stop.
	timer stopTimer
	// stuck holds the threads that did not stop in time: still attached
	// and interrupted, they stop when their uninterruptible sleep ends,
	// and are let go then; until then only the OS thread that attached
	// them can, so the capturing goroutine stays locked to it (pinned)
	// while any is stuck.
	stuck  map[int]*thread
	pinned bool
	// ahead lists the threads of the batch in hand that were interrupted
	// ahead, so that those whose capture does not come are let go.
	ahead []*thread
	// checkStuck is the thread checkAccess attached that did not stop in
	// time; owned by the loop, which lets it go once it stops.
	checkStuck *thread
	buf        [512]byte // for the state read before each capture
	// skipBlockedCheck makes captures attach to threads in
	// uninterruptible sleep (tests: the race the check cannot close).
	skipBlockedCheck bool
}

func newStopCapture() *stopCapture { return &stopCapture{stuck: make(map[int]*thread)} }

// threadStop is a thread's stop-per-capture state.
type threadStop struct {
	tracer    int // the OS thread that attached it, while stuck
	copyBytes int // bytes of stack to copy; 0 means initialStackCopy
	// ahead: attached and interrupted, at aheadAt, ahead of its capture
	// in a batch (interruptAhead), by the OS thread that captures it.
	ahead   bool
	aheadAt time.Time
}

// captureHere captures one thread of a continuous target on the caller's
// own OS thread, without a round trip to the tracer goroutine: each thread
// is attached only for its capture, so any thread can be its tracer. The
// caller holds hotMu.
func (t *Target) captureHere(tid int, c *target.Capture) error {
	runtime.LockOSThread()
	defer t.unlockOSThread()
	t.tendStuck()
	return t.captureContinuous(tid, c)
}

// captureBatchHere is captureHere for the threads ids, filling caps[i] and
// errs[i] for ids[i].
func (t *Target) captureBatchHere(ids []target.ThreadID, caps []*target.Capture, errs []error) {
	runtime.LockOSThread()
	defer t.unlockOSThread()
	t.stateMu.Lock()
	closed := t.closed
	t.stateMu.Unlock()
	t.tendStuck()
	next := 0 // ids[:next] have been interrupted ahead, where they could be
	for i, id := range ids {
		if closed {
			errs[i] = target.ErrClosed
			continue
		}
		if t.kernel == nil {
			for ; next < min(len(ids), i+stopsAhead); next++ {
				if th, err := t.liveThread(int(ids[next])); err == nil && t.interruptAhead(th) {
					t.stop.ahead = append(t.stop.ahead, th)
				}
			}
		}
		errs[i] = t.captureContinuous(int(id), caps[i])
	}
	for _, th := range t.stop.ahead {
		if th.stop.ahead {
			t.letGoAhead(th)
		}
	}
	clear(t.stop.ahead)
	t.stop.ahead = t.stop.ahead[:0]
}

// stopsAhead is how many threads of a batch of stop captures are
// interrupted at a time: each stops as soon as it gets a CPU, so that on a
// loaded machine, where a busy thread waits tens of milliseconds for one,
// their waits overlap rather than add up (a tick of 120 busy threads under
// eight busy loops took seconds one by one), while each is held stopped
// for at most the captures of the few before it.
const stopsAhead = 8

// interruptAhead attaches to and interrupts th before its turn in a batch,
// as stopAndCapture would (a thread stuck from an earlier capture, or in
// uninterruptible sleep, is left to it), so that its stop overlaps the
// captures before it; it reports whether it did. The caller is locked to
// its OS thread.
func (t *Target) interruptAhead(th *thread) bool {
	if _, ok := t.stop.stuck[th.tid]; ok || th.stop.ahead {
		return false
	}
	if st, _, err := th.files.stateCPU(t.stop.buf[:]); err != nil || st == 'D' && !t.stop.skipBlockedCheck {
		return false
	}
	at := time.Now()
	if seize(th.tid, 0) != nil {
		return false
	}
	if interrupt(th.tid) != nil {
		// Exiting: as stopAndCapture does, wait for it rather than
		// leave a traced zombie.
		t.letGoOnceStopped(th)
		return false
	}
	th.stop.ahead, th.stop.aheadAt = true, at
	return true
}

// letGoAhead lets go of a thread interrupted ahead whose capture did not
// come (the target closed, or the thread left the table).
func (t *Target) letGoAhead(th *thread) {
	th.stop.ahead = false
	t.letGoOnceStopped(th)
}

// letGoOnceStopped waits for a thread attached and interrupted to stop and
// lets it go; one that does not stop in time is kept to be let go later
// (holdStuck), and one that died is left (its status was consumed).
func (t *Target) letGoOnceStopped(th *thread) {
	switch err := t.awaitStopBlocking(th); {
	case err == nil:
		th.letGo()
	case errors.Is(err, target.ErrStopTimeout):
		t.holdStuck(th)
	}
}

// captureContinuous captures one thread in continuous mode: from its newest
// kernel sample when Options.Kernel.Period asks for them and its ring could be
// opened, by stopping it otherwise.
func (t *Target) captureContinuous(tid int, c *target.Capture) error {
	th, err := t.liveThread(tid)
	if err != nil {
		return err
	}
	if t.kernel == nil || th.kernel.noRing || t.kernel.proc != nil {
		return t.stopCaptureAndWalk(th, c)
	}
	return t.captureKernel(th, c)
}

// checkAccess verifies, for continuous mode, that the process may be traced:
// it seizes the main thread and detaches again at once. Threads are then
// attached only for the time of each capture.
func (t *Target) checkAccess() error {
	t.stateMu.Lock()
	err := t.refreshThreads()
	t.stateMu.Unlock()
	if errors.Is(err, target.ErrExited) {
		return fmt.Errorf("cannot attach to PID %d: it exited (%w)", t.pid, err)
	}
	if err != nil {
		return err
	}
	// Check with a thread that is not in uninterruptible sleep (it would
	// stop only when the sleep ends) and has not exited (ptrace refuses
	// it, as a main thread that ended while the others run): the main
	// thread unless it is such a one.
	tid := t.pid
	var buf [512]byte
	unfit := func(st byte) bool { return st == 'D' || st == 'Z' || st == 'X' }
	if th, ok := t.threads[tid]; ok {
		if st, _ := th.files.state(buf[:]); unfit(st) {
			for other, oth := range t.threads {
				if st, err := oth.files.state(buf[:]); err == nil && !unfit(st) {
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
			th.letGo()
		} else if errors.Is(err, target.ErrStopTimeout) {
			// It entered an uninterruptible sleep since: the loop lets
			// it go once it stops.
			t.stop.checkStuck = th
		}
	}
	return nil
}

// listThreads lists the threads of a continuous target that needs no check
// (heldAtExec).
func (t *Target) listThreads() error {
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	return t.refreshThreads()
}

// letGoCheckStuck lets go of the thread checkAccess attached if it has
// stopped since, and reports whether it is still attached. Loop only; a
// persistent target has none.
func (t *Target) letGoCheckStuck() bool {
	if t.stop == nil || t.stop.checkStuck == nil {
		return false
	}
	th := t.stop.checkStuck
	held, err := t.awaitStop(th, unix.WALL|unix.WNOHANG, time.Time{})
	switch {
	case held:
		th.letGo()
	case err == nil:
		return true
	}
	t.stop.checkStuck = nil
	return false
}

// liveThread looks a thread up in the thread table from a capturing
// goroutine (continuous mode), under stateMu.
func (t *Target) liveThread(tid int) (*thread, error) {
	t.stateMu.Lock()
	th, ok := t.threads[tid]
	t.stateMu.Unlock()
	if !ok {
		return nil, threadErr(tid, target.ErrNoThread)
	}
	return th, nil
}

// stopAndCapture attaches to one thread, captures it and detaches
// (continuous mode), so that no signal of the target is intercepted
// between samples.
func (t *Target) stopAndCapture(th *thread, c *target.Capture) error {
	tid := th.tid
	if th.stop.ahead {
		return t.captureAhead(th, c)
	}
	if _, ok := t.stop.stuck[tid]; ok {
		// Still attached from a capture it did not stop for.
		return threadErr(tid, target.ErrStopTimeout)
	}
	// A thread in uninterruptible sleep would stop only when its wait ends:
	// skip it rather than wait.
	st, cpu, serr := th.files.stateCPU(t.stop.buf[:])
	if serr == nil && st == 'D' && !t.stop.skipBlockedCheck {
		return threadErr(tid, target.ErrThreadBlocked)
	}
	// A thread running on another CPU stops within microseconds of the
	// interrupt: wait for it without sleeping. One that shares this CPU
	// can only reach its stop once this thread sleeps.
	spin := serr == nil && st == 'R' && cpu >= 0 && cpu != getcpuRaw()

	start := time.Now()
	if err := seize(tid, 0); err != nil {
		switch {
		case errors.Is(err, unix.ESRCH):
			return threadErr(tid, target.ErrNoThread)
		case errors.Is(err, unix.EPERM) && t.dying(th):
			// The kernel refuses to attach to a thread that is exiting.
			return threadErr(tid, target.ErrNoThread)
		default:
			return fmt.Errorf("attach thread %d: %w", tid, err)
		}
	}
	if err := interrupt(tid); err != nil {
		// The thread is exiting. A traced thread that exits stays a
		// zombie until its tracer reaps it, and holds up the whole
		// process's exit meanwhile: wait for it (or for a stop, then
		// detach) before giving up on it.
		t.letGoOnceStopped(th)
		return threadErr(tid, target.ErrNoThread)
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
	return t.captureAndRelease(th, c, start)
}

// captureAhead captures a thread interrupted ahead (interruptAhead) once
// it stops, and lets it go.
func (t *Target) captureAhead(th *thread, c *target.Capture) error {
	th.stop.ahead = false
	start := th.stop.aheadAt
	if held, err := t.awaitStop(th, unix.WALL|unix.WNOHANG, time.Time{}); err != nil {
		return err
	} else if !held {
		if err := t.awaitStopBlocking(th); err != nil {
			if errors.Is(err, target.ErrStopTimeout) {
				t.holdStuck(th)
			}
			return err
		}
	}
	return t.captureAndRelease(th, c, start)
}

// captureAndRelease captures a held thread and lets it go; c.Stopped is the
// time since start.
func (t *Target) captureAndRelease(th *thread, c *target.Capture, start time.Time) error {
	err := t.captureHeld(th, c, th.stop.stackCopy())
	if c.Walk.FallbackReads > 0 {
		th.stop.growCopy(cap(c.Stack))
	}
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
	err := th.letGo()
	if !errors.Is(err, unix.ESRCH) {
		return nil
	}
	// It may have stopped again rather than died: then it is let go.
	t.letGoOnceStopped(th)
	return threadErr(th.tid, target.ErrNoThread)
}

// stopSpin bounds how long a capture polls for a thread on another CPU to
// stop before it sleeps in wait4. A running thread nearly always stops
// within it, and a sleep and a wake-up of the capturing thread cost more
// than the polling.
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
	if t.stop.timer.arm(continuousStopTimeout) != nil {
		_, err := t.awaitStop(th, unix.WALL, time.Time{})
		return err
	}
	_, err := t.awaitStop(th, unix.WALL, deadline)
	t.stop.timer.disarm()
	return err
}

// holdStuck keeps a thread that did not stop in time, to be let go once it
// has (tendStuck).
func (t *Target) holdStuck(th *thread) {
	th.stop.tracer = gettidRaw()
	t.stop.stuck[th.tid] = th
}

// tendStuck lets go of the stuck threads that have stopped since, and
// forgets those that have died (reaping them). Only the OS thread that
// attached a thread can detach it; the others are left for a later call
// on that thread. The caller holds hotMu and is locked to its OS thread.
func (t *Target) tendStuck() {
	if len(t.stop.stuck) == 0 {
		return
	}
	me := gettidRaw()
	for _, th := range t.stop.stuck {
		if th.stop.tracer != me {
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
		delete(t.stop.stuck, th.tid)
		t.release(th)
	case err != nil && !errors.Is(err, target.ErrStopTimeout):
		delete(t.stop.stuck, th.tid)
	}
}

// letGoStuck, at Close, waits up to stopTimeout in all for the stuck
// threads this OS thread attached to stop, and lets them go, and reaps
// those that died. A thread still asleep after that (or attached from
// another OS thread) stays attached, interrupted, until the OS thread that
// attached it ends, when the kernel detaches it: for `record`, when macprof
// exits; the background reaper reaps it if it dies first. The caller holds
// hotMu.
func (t *Target) letGoStuck() {
	defer t.adoptOrphans()
	defer func() {
		for tid := range t.stop.stuck {
			if t.reapIfDead(tid) {
				delete(t.stop.stuck, tid)
			}
		}
	}()
	defer t.stop.timer.close()
	if len(t.stop.stuck) == 0 {
		return
	}
	runtime.LockOSThread()
	defer t.unlockOSThread()
	deadline := time.Now().Add(stopTimeout)
	me := gettidRaw()
	for _, th := range t.stop.stuck {
		left := time.Until(deadline)
		if th.stop.tracer != me || left <= 0 || t.stop.timer.arm(left) != nil {
			continue
		}
		held, err := t.awaitStop(th, unix.WALL, deadline)
		t.stop.timer.disarm()
		t.settleStuck(th, held, err)
	}
}

// unlockOSThread undoes the LockOSThread of a continuous capture, unless a
// thread is left stuck: the goroutine then stays on this OS thread, the
// only one that can let the thread go, until none is.
func (t *Target) unlockOSThread() {
	switch {
	case len(t.stop.stuck) > 0 && !t.stop.pinned:
		t.stop.pinned = true
	case len(t.stop.stuck) == 0 && t.stop.pinned:
		t.stop.pinned = false
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
// stopAndCapture); one that enters it after that check would hold the
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
				return false, threadErr(th.tid, target.ErrStopTimeout)
			}
			continue
		}
		if err == nil && got == 0 && options&unix.WNOHANG != 0 {
			return false, nil
		}
		if err != nil || got == 0 {
			return false, threadErr(th.tid, target.ErrNoThread)
		}
		if !ws.Stopped() {
			t.noteExit(got, ws)
			return false, threadErr(th.tid, target.ErrNoThread)
		}
		th.hold(ws)
		return true, nil
	}
}

// initialStackCopy is the first bulk copy of a thread's stack in continuous
// mode. Most stacks (goroutines, callbacks, worker loops) fit in it, and a
// smaller copy keeps the thread stopped for less time: the copy grows for
// threads whose walks go further.
const initialStackCopy = 8 << 10

// growCopy doubles the thread's stack copy, up to max, after a walk that
// read frame records past it. (A snapshot copies all it may.)
func (ts *threadStop) growCopy(max int) { ts.copyBytes = min(2*ts.stackCopy(), max) }

// stackCopy is how much of the thread's stack a capture copies.
func (ts *threadStop) stackCopy() int {
	if ts.copyBytes == 0 {
		return initialStackCopy
	}
	return ts.copyBytes
}
