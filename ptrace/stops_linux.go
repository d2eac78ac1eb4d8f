//go:build linux && (amd64 || arm64)

package ptrace

import (
	"fmt"
	"time"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// stopTimeout bounds how long a capture waits for one thread to stop.
const stopTimeout = 250 * time.Millisecond

// detachSignal is the signal to hand back when detaching (or resuming) a
// held thread: the one its signal-delivery-stop intercepted, none for a
// group-stop or an interrupt.
func (th *thread) detachSignal() int {
	if th.groupStop {
		return 0
	}
	return th.heldSig
}

// captureHeld reads registers, copies the stack and walks it, for a held
// thread.
func (t *Target) captureHeld(th *thread, c *target.Capture) error {
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
	n = min(n, uint64(th.copyLimit(cap(c.Stack), t.opts.Continuous)))
	if n > 0 {
		buf := c.Stack[:n]
		got, err := t.walkMem.readSome(from, buf)
		if err == nil && got > 0 {
			c.Stack = buf[:got]
			c.StackBase = from
		}
	}
	st := unwind.Stack{Base: c.StackBase, Data: c.Stack, Lo: lo, Hi: hi}
	c.PCs, c.Walk = t.walker.Walk(regs, &st, c.PCs)
	if c.Walk.FallbackReads > 0 {
		th.growCopy(cap(c.Stack))
	}
	return nil
}
