package mach

import (
	"fmt"
	"time"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// resetCapture clears c for a capture of thread id, keeping its buffers so
// that captures do not allocate.
func resetCapture(c *target.Capture, id target.ThreadID) {
	c.Thread = id
	c.Regs = unwind.Regs{}
	c.PCs = c.PCs[:0]
	c.Stack = c.Stack[:0]
	c.StackBase = 0
	c.Walk = unwind.Result{}
	c.Stopped = 0
	c.Err = nil
}

// Capture suspends one thread (thread_suspend), reads its registers, copies
// its stack with mach_vm_read_overwrite (one per KernelBufferMax bytes),
// walks it, and resumes it. The
// resume is deferred, so that a panic between the two cannot leave the
// thread suspended: thread_suspend raises a count that nothing else would
// lower (xnu osfmk/kern/thread_act.c). An unattended Target captures
// through CaptureBatch and task_suspend2 instead (see there).
func (t *Target) Capture(id target.ThreadID, c *target.Capture) error {
	t.calls.Lock()
	defer t.calls.Unlock()
	err := t.capture(id, c)
	if err == nil {
		t.noteCapture(c)
	}
	return err
}

// capture is Capture with t.calls held.
func (t *Target) capture(id target.ThreadID, c *target.Capture) (err error) {
	if t.self {
		return t.selfCapture(id, c)
	}
	th, err := t.lookup(id)
	if err != nil {
		return err
	}
	resetCapture(c, id)
	t.mem.mu.RLock()
	defer t.mem.mu.RUnlock()
	start := time.Now()
	if k := t.k.ThreadSuspend(th.port); k != KernSuccess {
		return ThreadError("thread_suspend", k, t.errorString(k), t.taskAlive())
	}
	defer func() {
		k := t.k.ThreadResume(th.port)
		c.Stopped = time.Since(start)
		if k != KernSuccess && err == nil {
			err = ThreadError("thread_resume", k, t.errorString(k), t.taskAlive())
		}
	}()
	return t.captureStopped(th, c)
}

// CaptureBatch captures ids[i] into caps[i]. An unattended Target
// (Options.Unattended: the agent) holds the whole task with task_suspend2
// once for the batch and reads each thread without thread_suspend: the
// kernel drops a task_suspend2 token when its holder dies (xnu
// osfmk/kern/task.c task_suspension_no_senders), so a profiler killed
// mid-capture never leaves its target stopped, at the price of stopping
// every thread of the task while the batch is taken, not one at a time.
// Otherwise, and when task_suspend2 is refused, each thread is captured
// with Capture.
func (t *Target) CaptureBatch(ids []target.ThreadID, caps []*target.Capture, errs []error) {
	t.calls.Lock()
	defer t.calls.Unlock()
	held := t.opts.Unattended && !t.self && !t.closed && len(ids) > 0 && t.captureHeld(ids, caps, errs)
	for i, id := range ids {
		if !held {
			errs[i] = t.capture(id, caps[i])
		}
		if errs[i] == nil {
			t.noteCapture(caps[i])
		}
	}
}

// captureHeld is CaptureBatch under one task_suspend2; false when the
// kernel refused it.
func (t *Target) captureHeld(ids []target.ThreadID, caps []*target.Capture, errs []error) bool {
	t.mem.mu.RLock()
	defer t.mem.mu.RUnlock()
	start := time.Now()
	token, k := t.k.TaskSuspend2(t.mem.task)
	if k != KernSuccess {
		return false
	}
	defer func() {
		t.k.TaskResume2(token)
		stopped := time.Since(start)
		for _, c := range caps[:len(ids)] {
			c.Stopped = stopped
		}
	}()
	for i, id := range ids {
		c := caps[i]
		resetCapture(c, id)
		th := t.threads[id]
		if th == nil {
			errs[i] = fmt.Errorf("thread %d: %w", id, target.ErrNoThread)
			continue
		}
		errs[i] = t.captureStopped(th, c)
	}
	return true
}

// stackRegion returns the bounds of the memory region holding sp, from the
// thread's cache or mach_vm_region.
func (t *Target) stackRegion(th *thread, sp uint64) (lo, hi uint64, ok bool) {
	if sp >= th.stackLo && sp < th.stackHi {
		return th.stackLo, th.stackHi, true
	}
	addr, size, object, k := t.k.VMRegion(t.mem.task, sp, &t.region)
	if object != 0 {
		t.k.PortDeallocate(t.k.TaskSelf(), object)
	}
	if k != KernSuccess || addr > sp || sp-addr >= size {
		return 0, 0, false
	}
	th.stackLo, th.stackHi = addr, addr+size
	return th.stackLo, th.stackHi, true
}

// captureStopped fills c for a suspended thread.
func (t *Target) captureStopped(th *thread, c *target.Capture) error {
	count, k := t.k.ThreadGetState(th.port, t.flavor.Flavor, t.stateWords())
	if k != KernSuccess {
		return t.stateError(th.port, k)
	}
	regs, ok := DecodeState(t.flavor, &t.arm, &t.x86, count, t.mask)
	if !ok {
		return fmt.Errorf("thread_get_state returned %d words, want %d", count, t.flavor.Count)
	}
	c.Regs = regs
	lo, hi, ok := t.stackRegion(th, regs.SP)
	if !ok {
		lo, hi = regs.SP, regs.SP
	}
	base, n := StackWindow(regs.SP, lo, hi, cap(c.Stack))
	if n > 0 {
		// In reads the kernel buffers (KernelBufferMax); what came
		// before a failed one is still the innermost frames.
		out, _ := t.mem.read(base, c.Stack[:n])
		c.Stack = c.Stack[:out]
		c.StackBase = base
	}
	st := unwind.Stack{Base: c.StackBase, Data: c.Stack, Lo: lo, Hi: hi}
	t.walk(regs, &st, c)
	return nil
}

// CaptureAll suspends the whole task with task_suspend2 (whose token the
// kernel releases if macprof dies, so the target is never left frozen),
// captures every thread, and resumes it. When task_suspend2 is refused
// (a read port may not be enough), every thread is suspended one by one
// first instead: still a consistent snapshot.
func (t *Target) CaptureAll(dst []target.Capture) (_ []target.Capture, err error) {
	t.calls.Lock()
	defer t.calls.Unlock()
	if t.self {
		return t.selfCaptureAll(dst)
	}
	ids, err := t.listThreads(nil)
	if err != nil {
		return dst[:0], err
	}
	t.mem.mu.RLock()
	defer t.mem.mu.RUnlock()
	start := time.Now()
	token, k := t.k.TaskSuspend2(t.mem.task)
	whole := k == KernSuccess
	var held []*thread
	// The holds are released on every way out, a panic included.
	defer func() {
		if whole {
			if k := t.k.TaskResume2(token); k != KernSuccess && err == nil {
				err = &Error{Op: "task_resume2", Code: k, Desc: t.errorString(k)}
			}
		}
		for _, th := range held {
			t.k.ThreadResume(th.port)
		}
	}()
	if !whole {
		for _, id := range ids {
			if th := t.threads[id]; th != nil && t.k.ThreadSuspend(th.port) == KernSuccess {
				held = append(held, th)
			}
		}
		if len(held) == 0 && len(ids) > 0 {
			if !t.taskAlive() {
				return dst[:0], target.ErrExited
			}
		}
	}
	dst = dst[:0]
	for _, id := range ids {
		c := t.nextCapture(&dst)
		resetCapture(c, id)
		th := t.threads[id]
		if th == nil {
			c.Err = fmt.Errorf("thread %d: %w", id, target.ErrNoThread)
			continue
		}
		if !whole && !contains(held, th) {
			c.Err = fmt.Errorf("thread %d could not be suspended: %w", id, target.ErrNoThread)
			continue
		}
		c.Err = t.captureStopped(th, c)
	}
	stopped := time.Since(start)
	for i := range dst {
		dst[i].Stopped = stopped
	}
	return dst, err
}

// stateWords is the scratch register state of the Target's flavor, as
// the words thread_get_state fills.
func (t *Target) stateWords() []uint32 {
	if t.flavor.Arch == unwind.ArchARM64 {
		return words(&t.arm, ArmThreadState64Count)
	}
	return words(&t.x86, X86ThreadState64Count)
}

// nextCapture grows *dst by one Capture, reusing the buffers of one that
// was there before.
func (t *Target) nextCapture(dst *[]target.Capture) *target.Capture {
	d := *dst
	if len(d) < cap(d) {
		d = d[:len(d)+1]
	} else {
		d = append(d, target.Capture{})
	}
	c := &d[len(d)-1]
	if cap(c.PCs) == 0 {
		c.PCs = make([]uint64, 0, t.opts.MaxFrames)
	}
	if cap(c.Stack) == 0 {
		c.Stack = make([]byte, 0, t.opts.StackBytes)
	}
	*dst = d
	return c
}

// contains reports whether th is in ths.
func contains(ths []*thread, th *thread) bool {
	for _, x := range ths {
		if x == th {
			return true
		}
	}
	return false
}
