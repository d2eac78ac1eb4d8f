//go:build linux && (amd64 || arm64)

package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// captureContinuous captures one thread in continuous mode: from its newest
// kernel sample when KernelSamplePeriod asks for them and its ring could be
// opened, by stopping it otherwise.
func (t *Target) captureContinuous(tid int, c *target.Capture) error {
	th, err := t.liveThread(tid)
	if err != nil {
		return err
	}
	if t.perfWalker == nil || th.noRing {
		return t.stopAndCapture(th, c)
	}
	if th.ring == nil {
		// A thread whose ring was closed while it idled gets back the
		// stack copy it had grown to, if the budget allows.
		stack := max(th.ringStack, perfStackBytes)
		r, small, err := t.openRing(tid, t.opts.KernelSamplePeriod, stack)
		if err != nil && stack > perfStackBytes {
			stack = perfStackBytes
			r, small, err = t.openRing(tid, t.opts.KernelSamplePeriod, stack)
		}
		if small && t.perfSmall == nil {
			t.perfSmall = fmt.Errorf("thread %d: sample buffer reduced to %d KiB for want of locked memory (ulimit -l, or perf_event_mlock_kb): CPU time whose samples did not fit is counted on the thread's previous stack", tid, perfMinRingBytes>>10)
		}
		if err != nil {
			// Not allowed or out of resources (a user's locked-memory
			// budget for rings is small): this thread is stopped for
			// its samples instead.
			th.noRing = true
			if t.perfOpenErr == nil {
				t.perfOpenErr = err
			}
			return t.stopAndCapture(th, c)
		}
		th.ring, th.ringStack, th.lastSample = r, stack, time.Now()
		// The ring has no sample yet: this once, stop the thread.
		return t.stopAndCapture(th, c)
	}
	return t.captureSampled(th, c)
}

// captureSampled fills c from the newest kernel sample of th and walks its
// stack copy. The walk stops at the copy's end (marked truncated): the
// thread has run on since the sample, so the rest of its stack is no longer
// the sample's.
func (t *Target) captureSampled(th *thread, c *target.Capture) error {
	r := th.ring
	at, size, ok := r.newest()
	if !ok {
		// Common in steady state (the kernel's period and the tick are
		// out of phase): the bare sentinel, which allocates nothing.
		r.consume()
		return ErrNoSample
	}
	defer r.consume()
	switch err := t.fillFromSample(th, at, size, c); {
	case errors.Is(err, errNoUserRegs):
		return ErrNoSample
	case err != nil:
		return fmt.Errorf("thread %d: %w", th.tid, err)
	}
	return nil
}

// errNoUserRegs reports a kernel sample without user registers (taken in a
// kernel thread): nothing to walk.
var errNoUserRegs = errors.New("sample without user registers")

// fillFromSample fills c from the sample record of size bytes at ring
// position at and walks its stack copy.
func (t *Target) fillFromSample(th *thread, at, size uint64, c *target.Capture) error {
	r := th.ring
	head := t.perfHead[:min(int(size), perfSampleHeadLen(perfRegCount))]
	r.readAt(head, at)
	s := &t.perfSample
	err := parsePerfSampleHead(head, int(size), perfRegCount, t.perfRegBuf[:], func(off int) uint64 {
		r.readAt(t.perfDyn[:], at+uint64(off))
		return binary.LittleEndian.Uint64(t.perfDyn[:])
	}, s)
	if err != nil {
		return err
	}
	if len(s.regs) != perfRegCount {
		return errNoUserRegs
	}
	regs := perfRegs(s.regs)
	c.Thread, c.Regs, c.Stopped, c.Err = target.ThreadID(th.tid), regs, 0, nil
	c.Stack = c.Stack[:min(s.stackLen, cap(c.Stack))]
	r.readAt(c.Stack, at+uint64(s.stackOff))
	c.StackBase = regs.SP
	lo, hi, ok := t.stackBounds(regs.SP)
	if !ok {
		lo, hi = regs.SP, regs.SP+uint64(len(c.Stack))
	}
	st := unwind.Stack{Base: c.StackBase, Data: c.Stack, Lo: lo, Hi: hi}
	c.PCs, c.Walk = t.perfWalker.Walk(regs, &st, c.PCs[:0])
	return nil
}

// KernelSampleError returns why kernel samples could not be used for some
// thread (which was then stopped for its samples), or nil.
func (t *Target) KernelSampleError() error {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	return t.perfOpenErr
}

// KernelSampleWarning returns why some thread's kernel samples are kept in
// a smaller buffer than the drain interval needs (samples that did not
// fit were counted on its previous stack), or nil.
func (t *Target) KernelSampleWarning() error {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	return t.perfSmall
}

// KernelSampled reports whether kernel samples are on, and whether every
// thread's could be opened so far (target.SampleDrainer).
func (t *Target) KernelSampled() (on, everyThread bool) {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	return t.perfWalker != nil, t.perfOpenErr == nil
}

// DrainSamples captures the kernel samples of a thread taken since the
// previous call into caps, oldest first, and returns how many
// (target.SampleDrainer). It reads the thread's ring without a system
// call and without stopping the thread, and allocates nothing. A thread
// without a ring yet, or refused one, gets target.ErrNotKernelSampled; a
// thread that exited with samples left is drained once more, then closed.
// Like Threads, which closes the rings of threads that are gone, it is
// called from the sampler's goroutine only.
func (t *Target) DrainSamples(id target.ThreadID, caps []*target.Capture) (int, error) {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	tid := int(id)
	t.stateMu.Lock()
	closed := t.closed
	th, live := t.threads[tid]
	departed := false
	if !live {
		th, departed = t.departed[tid]
	}
	t.stateMu.Unlock()
	switch {
	case closed:
		return 0, target.ErrClosed
	case !live && !departed:
		return 0, fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
	case t.perfWalker == nil || th.ring == nil:
		return 0, target.ErrNotKernelSampled
	}
	r := th.ring
	r.begin()
	n := 0
	for n < len(caps) {
		at, size, ok := r.next()
		if !ok {
			break
		}
		// A sample that cannot be read or walked is skipped: the
		// sampler counts its CPU time on the thread's last stack.
		if t.fillFromSample(th, at, size, caps[n]) == nil {
			th.ranOff = th.ranOff || caps[n].Walk.Stop == unwind.StopReadFailed
			n++
		}
	}
	r.consume()
	now := time.Now()
	if n > 0 {
		th.lastSample = now
	}
	switch {
	case n == len(caps):
		// More to drain.
	case departed:
		t.stateMu.Lock()
		t.forgetDeparted(tid)
		t.stateMu.Unlock()
	case th.ranOff && !th.ringFull && t.ringsMayGrow && t.perfSmall == nil && t.perfOpenErr == nil:
		t.growRing(th)
	case now.Sub(th.lastSample) > t.ringIdle:
		// Idle for long: its ring's locked memory goes back. If it
		// runs again, its next capture stops it once and opens a new
		// one.
		th.ring.close()
		th.ring = nil
	}
	return n, nil
}

// ringIdleTimeout is how long a thread's ring stays open without a sample.
const ringIdleTimeout = 5 * time.Second

// canLockMemory reports whether macprof has CAP_IPC_LOCK, which frees the
// rings it maps from the locked-memory budget (perf_event_mlock_kb and
// RLIMIT_MEMLOCK).
func canLockMemory() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_IPC_LOCK/32].Effective&(1<<(unix.CAP_IPC_LOCK%32)) != 0
}

// growRing reopens the kernel sample event of th, whose samples' walks ran
// past their stack copies, with twice the copy (and a ring to match), once
// its ring is drained. The new event starts its first period afresh: the
// sampler counts the CPU time of that part period on the last stack. If
// the kernel refuses the larger ring, the thread keeps the one it has.
func (t *Target) growRing(th *thread) {
	size := min(2*th.ringStack, perfMaxStackBytes)
	r, small, err := t.openRing(th.tid, t.opts.KernelSamplePeriod, size)
	if err != nil || small {
		if r != nil {
			r.close()
		}
		th.ringFull = true
		return
	}
	th.ring.close()
	th.ring, th.ringStack, th.ranOff = r, size, false
	th.ringFull = size >= perfMaxStackBytes
}
