//go:build darwin

package mach

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"
	"unsafe"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// ErrCurrentThread is returned by a Self target asked to capture the very
// thread that is sampling: a thread cannot be suspended by itself.
var ErrCurrentThread = errors.New("cannot capture the thread that is sampling")

// Self returns a Target for the calling process's other threads, for
// programs that want their own stacks in-process. Threads never lists, and
// Capture refuses, the calling thread, so run the sampler on a goroutine
// locked to its OS thread. While a thread is suspended a capture runs only
// nosplit code and scheduler-free libSystem calls, because a Go
// stop-the-world waiting on the suspended thread would deadlock; the walk
// runs after the resume. CaptureAll suspends one thread at a time
// (suspending the task would suspend the caller), so a Self snapshot is not
// taken at one instant.
func Self(opts target.Options) (*Target, error) {
	return newTarget(os.Getpid(), selfTask(), false, true, opts)
}

// rawCapture suspends a thread of this process, reads its registers and
// copies [sp, min(hi, sp+capacity)) if lo <= sp < hi, and resumes it,
// calling nothing that could let the scheduler in. spField points at the
// SP field inside state; mask strips PAC bits from it.
//
//go:nosplit
//go:norace
func rawCapture(task, port, flavor uint32, state unsafe.Pointer, count *uint32, spField *uint64, mask, lo, hi uint64, buf unsafe.Pointer, capacity uint64, copied *uint64) (suspendKR, stateKR, resumeKR KernReturn) {
	*copied = 0
	if k := rawThreadSuspend(port); k != KernSuccess {
		return k, KernSuccess, KernSuccess
	}
	stateKR = rawThreadGetState(port, flavor, state, count)
	if stateKR == KernSuccess && capacity > 0 {
		sp := *spField & mask
		if sp >= lo && sp < hi {
			n := hi - sp
			if n > capacity {
				n = capacity
			}
			if rawMachVMReadOverwrite(task, sp, n, buf, copied) != KernSuccess {
				*copied = 0
			}
		}
	}
	resumeKR = rawThreadResume(port)
	return KernSuccess, stateKR, resumeKR
}

// selfCapture is Capture for a Self target: rawCapture, then the walk.
func (t *Target) selfCapture(id target.ThreadID, c *target.Capture) error {
	th, err := t.lookup(id)
	if err != nil {
		return err
	}
	resetCapture(c, id)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cur := machThreadSelf()
	defer machPortDeallocate(selfTask(), cur)
	if th.port == cur {
		return ErrCurrentThread
	}
	var state unsafe.Pointer
	var spField *uint64
	if t.flavor.Arch == unwind.ArchARM64 {
		state, spField = unsafe.Pointer(&t.arm), &t.arm.SP
	} else {
		state, spField = unsafe.Pointer(&t.x86), &t.x86.RSP
	}
	mask := t.mask
	if mask == 0 {
		mask = ^uint64(0)
	}
	buf := c.Stack[:cap(c.Stack)]
	var bufp unsafe.Pointer
	if len(buf) > 0 {
		bufp = unsafe.Pointer(&buf[0])
	}
	for attempt := 0; ; attempt++ {
		count := t.flavor.Count
		var copied uint64
		start := time.Now()
		sk, gk, rk := rawCapture(t.mem.task, th.port, t.flavor.Flavor, state, &count, spField, mask,
			th.stackLo, th.stackHi, bufp, uint64(len(buf)), &copied)
		c.Stopped = time.Since(start)
		switch {
		case sk != KernSuccess:
			return ThreadError("thread_suspend", sk, machErrorString(sk), true)
		case rk != KernSuccess:
			return ThreadError("thread_resume", rk, machErrorString(rk), true)
		case gk != KernSuccess:
			return ThreadError("thread_get_state", gk, machErrorString(gk), true)
		}
		regs, ok := DecodeState(t.flavor, &t.arm, &t.x86, count, t.mask)
		if !ok {
			return fmt.Errorf("thread_get_state returned %d words, want %d", count, t.flavor.Count)
		}
		c.Regs = regs
		if regs.SP < th.stackLo || regs.SP >= th.stackHi {
			// The stack's region was not known (first capture of this
			// thread) or SP left it: look it up while the thread runs and
			// capture once more with the bounds.
			if _, _, found := t.stackRegion(th, regs.SP); found && attempt == 0 {
				continue
			}
		}
		if copied > 0 && copied <= uint64(len(buf)) {
			c.Stack = buf[:copied]
			c.StackBase = regs.SP
		}
		lo, hi := th.stackLo, th.stackHi
		if regs.SP < lo || regs.SP >= hi {
			lo, hi = regs.SP, regs.SP
		}
		st := unwind.Stack{Base: c.StackBase, Data: c.Stack, Lo: lo, Hi: hi}
		c.PCs, c.Walk = t.walker.Walk(regs, &st, c.PCs)
		return nil
	}
}

// selfCaptureAll is CaptureAll for a Self target, one thread at a time.
func (t *Target) selfCaptureAll(dst []target.Capture) ([]target.Capture, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ids, err := t.Threads(nil)
	if err != nil {
		return dst[:0], err
	}
	dst = dst[:0]
	for _, id := range ids {
		c := t.nextCapture(&dst)
		if err := t.selfCapture(id, c); err != nil {
			c.Thread, c.Err = id, err
		}
	}
	return dst, nil
}
