//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"sync/atomic"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
	"golang.org/x/sys/unix"
)

// traceOptions are set on every seized thread: follow new threads and report
// exec. PTRACE_O_EXITKILL is deliberately absent, so that a profiler that
// dies leaves its target running.
const traceOptions = unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_TRACEEXEC

// persistent is the state of a persistent target (snapshot): every thread
// is seized at Attach and stays attached until Close, and the tracer
// thread services the stops the target reports meanwhile (signals, new
// threads, exec) as soon as SIGCHLD says there are some. Owned by the
// tracer thread.
type persistent struct {
	sigch     chan os.Signal // SIGCHLD: some tracee changed state
	drainWant bool           // a state change is waiting for drain
	waitTimer *time.Timer    // ends awaitHeld's sleep at its deadline
	// release makes captureAll detach its threads rather than resume
	// them (CaptureAllAndDetach).
	release bool
	// captured is the memory map the last captureAll found the stacks
	// in, for WalkCopies (read on the caller's goroutine).
	captured atomic.Pointer[images.Regions]
	// imgRegions is the memory map Images read last (under imgMu).
	imgRegions images.Regions
}

func newPersistent() *persistent {
	p := &persistent{sigch: make(chan os.Signal, 1), waitTimer: time.NewTimer(time.Hour)}
	p.waitTimer.Stop()
	return p
}

// attachAll seizes every thread, re-listing until no new thread appears.
func (t *Target) attachAll() error {
	for round := 0; ; round++ {
		tids, err := listTasks(t.pid)
		if err != nil {
			return fmt.Errorf("list threads of PID %d: %w", t.pid, err)
		}
		added := 0
		for _, tid := range tids {
			if _, ok := t.threads[tid]; ok {
				continue
			}
			if err := seize(tid, traceOptions); err != nil {
				if errors.Is(err, unix.ESRCH) || errors.Is(err, unix.EPERM) && taskEnded(t.pid, tid) {
					continue // the thread exited meanwhile
				}
				if errors.Is(err, unix.EPERM) && len(t.threads) > 0 && t.tracedByUs(tid) {
					// Auto-attached through PTRACE_O_TRACECLONE already.
					t.addThread(tid)
					added++
					continue
				}
				if len(t.threads) == 0 {
					return attachError(t.pid, err)
				}
				return fmt.Errorf("attach thread %d of PID %d: %w", tid, t.pid, err)
			}
			t.addThread(tid)
			added++
		}
		if added == 0 {
			break
		}
		if round > 1000 {
			return fmt.Errorf("attach PID %d: threads keep appearing faster than they can be attached", t.pid)
		}
	}
	if len(t.threads) == 0 {
		return fmt.Errorf("PID %d has no threads left to attach: it exited (%w)", t.pid, target.ErrExited)
	}
	// Service whatever happened while attaching (new threads' first stops).
	t.drain()
	return nil
}

// tracedByUs reports whether tid's tracer is a thread of this process
// (TracerPid names the tracing thread, not its process).
func (t *Target) tracedByUs(tid int) bool {
	v, err := procStatusField(tid, "TracerPid")
	return err == nil && tracerProcess(v) == os.Getpid()
}

// drain consumes every pending state change of the tracees and resumes
// them. It costs one waitid when nothing is pending.
func (t *Target) drain() {
	t.persist.drainWant = false
	for i := 0; i < 100000; i++ {
		pid, err := peekWaitable()
		if err != nil || pid == 0 {
			return
		}
		_, ours := t.threads[pid]
		_, wasOurs := t.gone[pid]
		if !ours && !wasOurs {
			// A child that is not ours to reap: fall back to asking each
			// tracee in turn.
			t.drainEach()
			return
		}
		if !t.waitOne(pid, unix.WNOHANG) {
			return
		}
	}
}

// drainEach polls each tracee with WNOHANG.
func (t *Target) drainEach() {
	for pass := 0; pass < 16; pass++ {
		progress := false
		for tid := range t.threads {
			if t.threads[tid].held {
				continue
			}
			if t.waitOne(tid, unix.WNOHANG) {
				progress = true
			}
		}
		for tid := range t.gone {
			if t.waitOne(tid, unix.WNOHANG) {
				progress = true
			}
		}
		if !progress {
			return
		}
	}
}

// waitOne consumes one state change of tid (blocking unless WNOHANG is in
// options) and handles it: unsolicited stops are resumed at once, and a
// stop of a thread we are capturing is left held. It reports whether a
// change was consumed.
func (t *Target) waitOne(tid int, options int) bool {
	var ws unix.WaitStatus
	got, err := wait4(tid, &ws, options|unix.WALL)
	if err != nil {
		if errors.Is(err, unix.ECHILD) {
			t.dropThread(tid, true)
		}
		return false
	}
	if got == 0 {
		return false
	}
	t.handleStatus(got, ws, false)
	return true
}

// handleStatus acts on one wait status. When keep is true a stop is left
// held for the caller to capture and resume; otherwise it is resumed.
func (t *Target) handleStatus(tid int, ws unix.WaitStatus, keep bool) {
	switch {
	case ws.Exited() || ws.Signaled():
		t.noteExit(tid, ws)
		t.dropThread(tid, true)
		return
	case !ws.Stopped():
		return
	}
	th, ok := t.threads[tid]
	if !ok {
		// A thread we have not heard of: auto-attached through a clone
		// whose event we have not seen yet.
		th = t.addThread(tid)
	}
	th.hold(ws)
	if sig := ws.StopSignal(); sig == unix.SIGTRAP {
		switch ws.TrapCause() {
		case unix.PTRACE_EVENT_CLONE:
			if msg, err := ptraceEventMsg(tid); err == nil {
				t.addThread(int(msg))
			}
		case unix.PTRACE_EVENT_EXEC:
			t.onExec(tid)
			th = t.threads[tid]
		}
	}
	if !keep {
		t.resume(th)
	}
}

// resume lets a held thread run again.
func (t *Target) resume(th *thread) {
	if th == nil || !th.held {
		return
	}
	var err error
	if th.groupStop {
		err = listen(th.tid)
	} else {
		err = cont(th.tid, th.heldSig)
	}
	th.unhold()
	if errors.Is(err, unix.ESRCH) {
		t.dropThread(th.tid, false)
	}
}

// onExec handles PTRACE_EVENT_EXEC: every other thread is gone and the
// images changed.
func (t *Target) onExec(tid int) {
	for other := range t.threads {
		if other != tid {
			t.dropThread(other, false)
		}
	}
	t.regions = nil
	t.imgMu.Lock()
	t.imgSig, t.imgSet = nil, nil
	t.imgMu.Unlock()
	t.stateMu.Lock()
	t.exited = false
	t.stateMu.Unlock()
}

// interruptAndHold interrupts a thread and waits until it is held in a
// ptrace-stop.
func (t *Target) interruptAndHold(th *thread) error {
	if th.held {
		return nil
	}
	if err := interrupt(th.tid); err != nil {
		if errors.Is(err, unix.ESRCH) {
			t.dropThread(th.tid, false)
			return threadErr(th.tid, target.ErrNoThread)
		}
		return fmt.Errorf("interrupt thread %d: %w", th.tid, err)
	}
	return t.awaitHeld(th, time.Now().Add(stopTimeout))
}

// awaitHeld waits until th is held, servicing nothing else.
func (t *Target) awaitHeld(th *thread, deadline time.Time) error {
	for {
		var ws unix.WaitStatus
		got, err := wait4(th.tid, &ws, unix.WNOHANG|unix.WALL)
		if err != nil {
			t.dropThread(th.tid, errors.Is(err, unix.ECHILD))
			return threadErr(th.tid, target.ErrNoThread)
		}
		if got != 0 {
			t.handleStatus(got, ws, true)
			if t.threads[th.tid] != th {
				return threadErr(th.tid, target.ErrNoThread)
			}
			if th.held {
				return nil
			}
			continue
		}
		// Not stopped yet: sleep until SIGCHLD says some tracee changed
		// state (no busy polling, which would take the CPU the thread
		// needs to reach its stop), or until the deadline.
		left := time.Until(deadline)
		if left <= 0 {
			return threadErr(th.tid, target.ErrStopTimeout)
		}
		p := t.persist
		p.waitTimer.Reset(left)
		select {
		case <-p.sigch:
			// The change may be another tracee's: let the loop drain.
			p.drainWant = true
		case <-p.waitTimer.C:
		}
		p.waitTimer.Stop()
	}
}

// capture stops, captures and resumes one thread of a persistent target.
func (t *Target) capture(tid int, c *target.Capture) error {
	th, ok := t.threads[tid]
	if !ok {
		return threadErr(tid, target.ErrNoThread)
	}
	start := time.Now()
	if err := t.interruptAndHold(th); err != nil {
		if errors.Is(err, target.ErrStopTimeout) && t.dying(th) {
			t.dropThread(tid, false)
			err = threadErr(tid, target.ErrNoThread)
		}
		if t.exited {
			return target.ErrExited
		}
		return err
	}
	err := t.captureHeld(th, c, cap(c.Stack))
	t.resume(th)
	c.Stopped = time.Since(start)
	return err
}

// captureAll stops every thread, then captures each, then resumes all.
func (t *Target) captureAll(dst []target.Capture) ([]target.Capture, error) {
	dst = dst[:0]
	tids := make([]int, 0, len(t.threads))
	for tid := range t.threads {
		tids = append(tids, tid)
	}
	sort.Ints(tids)
	if t.regions == nil {
		// The memory map Images read last bounds the stacks of the
		// threads it saw (stackBounds reads it again for a stack in
		// none of its mappings): no read of it during the stop.
		t.imgMu.Lock()
		t.regions = t.persist.imgRegions
		t.imgMu.Unlock()
	}
	start := time.Now()
	// Interrupt them all first so that they stop together.
	for _, tid := range tids {
		th := t.threads[tid]
		if th == nil || th.held {
			continue
		}
		if err := interrupt(tid); err != nil && errors.Is(err, unix.ESRCH) {
			t.dropThread(tid, false)
		}
	}
	deadline := time.Now().Add(stopTimeout)
	var held []*thread
	// Frames and stack copies are packed one after the other (slab).
	var pcs slab[uint64]
	var stacks slab[byte]
	for k, tid := range tids {
		i := len(dst)
		if cap(dst) > i {
			dst = dst[:i+1]
		} else {
			dst = append(dst, target.Capture{})
		}
		c := &dst[i]
		c.PCs = pcs.next(t.opts.MaxFrames, len(tids)-k)
		c.Stack = stacks.next(t.opts.StackBytes, len(tids)-k)
		c.Thread = target.ThreadID(tid)
		c.Err = nil
		if th := t.threads[tid]; th == nil {
			c.Err = threadErr(tid, target.ErrNoThread) // it ended meanwhile
		} else if err := t.awaitHeld(th, deadline); err != nil {
			c.Err = err
		} else {
			held = append(held, th)
			if err := t.captureHeld(th, c, cap(c.Stack)); err != nil {
				c.Err = err
			}
		}
		c.PCs, c.Stack = pcs.keep(c.PCs), stacks.keep(c.Stack)
	}
	if t.persist.release {
		t.letGoCaptured(held)
	} else {
		for _, th := range held {
			t.resume(th)
		}
	}
	stopped := time.Since(start)
	for i := range dst {
		dst[i].Stopped = stopped
	}
	regions := t.regions
	t.persist.captured.Store(&regions)
	// New threads that appeared meanwhile are now traced; their first
	// stops are serviced by the next drain.
	t.drain()
	if t.exited && len(held) == 0 {
		return dst, target.ErrExited
	}
	return dst, nil
}
