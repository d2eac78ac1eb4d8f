package mach

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// ErrCurrentThread is returned by a Self target asked to capture the very
// thread that is sampling: a thread cannot be suspended by itself.
var ErrCurrentThread = errors.New("cannot capture the thread that is sampling")

// SelfKernel returns a Target for the calling process's other threads, for
// programs that want their own stacks in-process. Threads never lists, and
// Capture refuses, the calling thread, so run the sampler on a goroutine
// locked to its OS thread. While a thread is suspended a capture runs only
// nosplit code and scheduler-free libSystem calls on darwin (RawCapturer),
// because a Go stop-the-world waiting on the suspended thread would
// deadlock; the walk runs after the resume. CaptureAll suspends one thread
// at a time (suspending the task would suspend the caller), so a Self
// snapshot is not taken at one instant.
func SelfKernel(k Kernel, opts target.Options) (*Target, error) {
	return newTarget(k, os.Getpid(), k.TaskSelf(), false, true, opts)
}

// rawCapture runs rc through the kernel's scheduler-free path when it has
// one.
func (t *Target) rawCapture(rc *RawCapture) {
	if r, ok := t.k.(RawCapturer); ok {
		r.RawCapture(rc)
		return
	}
	DoRawCapture(t.k, rc)
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
	cur := t.k.ThreadSelf()
	defer t.k.PortDeallocate(t.k.TaskSelf(), cur)
	if th.port == cur {
		return ErrCurrentThread
	}
	rc := &t.raw
	rc.Task, rc.Port, rc.Flavor, rc.State = t.mem.task, th.port, t.flavor.Flavor, t.stateWords()
	if t.flavor.Arch == unwind.ArchARM64 {
		rc.SPWord = 62 // arm_thread_state64_t.__sp
	} else {
		rc.SPWord = 14 // x86_thread_state64_t.__rsp
	}
	rc.Chunk = t.mem.chunk
	rc.Mask = t.mask
	if rc.Mask == 0 {
		rc.Mask = ^uint64(0)
	}
	buf := c.Stack[:cap(c.Stack)]
	rc.Buf = buf
	for attempt := 0; ; attempt++ {
		rc.Lo, rc.Hi = th.stackLo, th.stackHi
		start := time.Now()
		t.rawCapture(rc)
		c.Stopped = time.Since(start)
		switch {
		case rc.SuspendKR != KernSuccess:
			return ThreadError("thread_suspend", rc.SuspendKR, t.errorString(rc.SuspendKR), true)
		case rc.ResumeKR != KernSuccess:
			return ThreadError("thread_resume", rc.ResumeKR, t.errorString(rc.ResumeKR), true)
		case rc.StateKR != KernSuccess:
			return ThreadError("thread_get_state", rc.StateKR, t.errorString(rc.StateKR), true)
		}
		regs, ok := DecodeState(t.flavor, &t.arm, &t.x86, rc.Count, t.mask)
		if !ok {
			return fmt.Errorf("thread_get_state returned %d words, want %d", rc.Count, t.flavor.Count)
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
		if rc.Copied > 0 && rc.Copied <= uint64(len(buf)) {
			c.Stack = buf[:rc.Copied]
			c.StackBase = regs.SP
		}
		lo, hi := th.stackLo, th.stackHi
		if regs.SP < lo || regs.SP >= hi {
			lo, hi = regs.SP, regs.SP
		}
		st := unwind.Stack{Base: c.StackBase, Data: c.Stack, Lo: lo, Hi: hi}
		t.walk(regs, &st, c)
		return nil
	}
}

// selfCaptureAll is CaptureAll for a Self target, one thread at a time.
func (t *Target) selfCaptureAll(dst []target.Capture) ([]target.Capture, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ids, err := t.listThreads(nil)
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
