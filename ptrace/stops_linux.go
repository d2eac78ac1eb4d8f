//go:build linux && (amd64 || arm64)

package ptrace

import (
	"fmt"
	"time"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// What persistent tracing and stop-per-capture share: the state of a
// thread held in a ptrace-stop, how a stop is decoded, the capture of a
// held thread, the exit status of the process, and the errors about one
// thread.

// stopTimeout bounds how long a persistent target waits for a thread to
// stop, and how long Close waits for a continuous target's stuck threads.
const stopTimeout = 250 * time.Millisecond

// hold records that th sits in the ptrace-stop ws reports, consumed with
// wait4. A group-stop (an event stop with the stopping signal) is resumed
// with PTRACE_LISTEN; a stop without an event is a signal's delivery,
// SIGTRAP included (a thread seized without options reports no exec or
// clone traps), and its signal is handed back on resume; an interrupt, a
// new thread's first stop or a clone or exec event carries no signal.
func (th *thread) hold(ws unix.WaitStatus) {
	th.held, th.heldSig, th.groupStop = true, 0, false
	sig, ev := ws.StopSignal(), ws.TrapCause()
	switch {
	case ev == unix.PTRACE_EVENT_STOP && sig != unix.SIGTRAP:
		th.groupStop = true
	case ev == 0:
		th.heldSig = int(sig)
	}
}

// unhold records that th runs again, resumed or detached.
func (th *thread) unhold() { th.held, th.heldSig, th.groupStop = false, 0, false }

// detachSignal is the signal to hand back when detaching (or resuming) a
// held thread: the one its signal-delivery-stop intercepted, none for a
// group-stop or an interrupt.
func (th *thread) detachSignal() int {
	if th.groupStop {
		return 0
	}
	return th.heldSig
}

// letGo detaches a held thread, handing back the signal it was stopped
// for.
func (th *thread) letGo() error {
	err := detach(th.tid, th.detachSignal())
	th.unhold()
	return err
}

// noteExit keeps, for ExitStatus, the wait status of the target process
// itself when the tracer reaped it: a traced child's exit is reported to
// its tracer before its parent, so launch mode's status would be lost.
func (t *Target) noteExit(pid int, ws unix.WaitStatus) {
	if pid != t.pid || !(ws.Exited() || ws.Signaled()) {
		return
	}
	t.statusMu.Lock()
	t.exitStatus, t.exitKnown = ws, true
	t.statusMu.Unlock()
}

// threadErr wraps err, most often one of target's error kinds, with the
// thread it is about.
func threadErr(tid int, err error) error { return fmt.Errorf("thread %d: %w", tid, err) }

// captureHeld reads registers, copies at most limit bytes of the stack
// (and no more than c.Stack holds) and walks it, for a held thread.
func (t *Target) captureHeld(th *thread, c *target.Capture, limit int) error {
	c.Thread = target.ThreadID(th.tid)
	c.PCs = c.PCs[:0]
	c.Stack = c.Stack[:0]
	c.StackBase = 0
	c.Walk = unwind.Result{}
	c.Err = nil
	regs, err := getRegs(th.tid, &t.regs)
	if err != nil {
		return fmt.Errorf("read registers of thread %d: %w", th.tid, err)
	}
	c.Regs = regs
	lo, hi, ok := t.stackBounds(regs.SP)
	if !ok {
		// No region holds SP: walk nothing but the PC.
		lo, hi = regs.SP, regs.SP
	}
	// The copy starts a little below SP: Go on arm64 keeps the innermost
	// frame record at SP-8.
	from := regs.SP
	if nativeArch == unwind.ArchARM64 && from-16 >= lo && from >= 16 {
		from -= 16
	}
	n := hi - from
	if hi < from {
		n = 0
	}
	n = min(n, uint64(min(limit, cap(c.Stack))))
	if n > 0 {
		buf := c.Stack[:n]
		got, err := t.walkMem.readSome(from, buf)
		if err == nil && got > 0 {
			c.Stack = buf[:got]
			c.StackBase = from
		}
	}
	if len(c.Stack) > 0 && t.walksCopiesAfter() {
		// WalkCopies walks the copy once the thread runs again.
		c.PCs = append(c.PCs, regs.PC)
		return nil
	}
	st := unwind.Stack{Base: c.StackBase, Data: c.Stack, Lo: lo, Hi: hi}
	c.PCs, c.Walk = t.walk(t.walker, regs, &st, c.PCs, true)
	return nil
}

// walksCopiesAfter reports whether the captures under way are walked
// after the stop rather than during it: those of CaptureAllAndDetach with
// unwind tables, which WalkCopies walks again anyway, so that the threads
// are stopped only for the copy. Tracer thread only.
func (t *Target) walksCopiesAfter() bool {
	return t.persist != nil && t.persist.release && t.plan().tables
}

// CaptureAllAndDetach is CaptureAll for a target captured once (a
// snapshot): each thread is detached from the stop of its capture instead
// of resumed, so that Close need not stop it again to detach it (it then
// lets go only of threads that started since). Memory reads and
// WalkCopies still work; captures after it find no thread. With unwind
// tables a capture with a stack copy holds only its PC until WalkCopies
// walks it: the threads are stopped only for the copies.
func (t *Target) CaptureAllAndDetach(dst []target.Capture) ([]target.Capture, error) {
	return t.captureAllOp(dst, true)
}

// letGoCaptured detaches the held threads, each with the signal its stop
// intercepted, and forgets them: nothing of them is left to detach. The
// tracer thread calls it.
func (t *Target) letGoCaptured(held []*thread) {
	for _, th := range held {
		th.letGo() // ESRCH: it ended, which detaches it too
	}
	t.stateMu.Lock()
	for _, th := range held {
		th.closeFiles()
		delete(t.threads, th.tid)
	}
	t.stateMu.Unlock()
}

// slab hands out the buffers of captures taken one after another, each
// starting where the used part of the one before ends: a capture of every
// thread then writes the pages its frames and copies fill, not one or two
// fresh pages per thread (each a page fault, 20-50 us on a VM).
type slab[T any] struct {
	buf []T
	off int
}

// next returns an empty buffer of capacity n from the slab, first making
// one of n*count elements when less than n is left. Only the buffer next
// returned last may be filled, and it is handed back to keep before the
// next call.
func (s *slab[T]) next(n, count int) []T {
	if n <= 0 {
		return nil
	}
	if len(s.buf)-s.off < n {
		s.buf, s.off = make([]T, n*max(count, 1)), 0
	}
	return s.buf[s.off : s.off : s.off+n]
}

// keep takes b, filled from the start of the buffer next returned, as
// used, and returns it with its capacity cut to its length, so that no
// append to it writes over the next buffer. The next buffer starts at a
// multiple of 16 elements (a stack copy's start keeps its alignment).
func (s *slab[T]) keep(b []T) []T {
	if s.buf == nil {
		return b[:len(b):len(b)]
	}
	s.off = min(len(s.buf), s.off+(len(b)+15)&^15)
	return b[:len(b):len(b)]
}
