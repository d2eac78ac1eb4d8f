//go:build linux && (amd64 || arm64)

package ptrace

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// Hybrid samples: the kernel's callchain and a small stack copy in each
// sample. A thread whose walks are not exact by frame records (frameless
// leaves, a C library without frame pointers) but read little of its stack
// copy moves, with --unwind auto, to samples that copy only what its walks
// read (hybridCopy) and carry the kernel's frame-record walk besides: the
// walk unwinds the copy with the tables and, where it needs more, takes the
// callers from the callchain where that is what the tables would have found
// (unwind.Stack.Chain). A walk that can do neither is cut there, marked
// truncated (unwind.StopReadFailed), and the ring goes back to whole copies,
// to try again after twice as many samples, as a ring with callchains does.

// Hybrid copies: at most this many bytes (beyond, a copy is not small), and
// a multiple of hybridCopyStep.
const (
	hybridMaxCopy  = 4 << 10
	hybridCopyStep = 512
)

// hybridCopy returns the stack bytes a hybrid ring copies for walks that
// read need bytes above SP: need with a quarter (at least 256 bytes) to
// spare, rounded up to hybridCopyStep, or 0 where that is more than
// hybridMaxCopy.
func hybridCopy(need int) int {
	if need <= 0 {
		return 0
	}
	n := need + max(need/4, 256)
	n = (n + hybridCopyStep - 1) / hybridCopyStep * hybridCopyStep
	if n > hybridMaxCopy {
		return 0
	}
	return n
}

// perfHybridSampleMaxBytes bounds a hybrid sample record with stack bytes
// of stack: a callchain's, then the copy, its size and dynamic size.
func perfHybridSampleMaxBytes(stack int) int {
	return perfChainSampleMaxBytes() + 8 + stack + 8
}

// hybridSpec returns the spec of a hybrid ring of t's with copies of stack
// bytes (hybridDrainPeriods).
func (t *Target) hybridSpec(stack int) ringSpec {
	periods := t.hybridDrainPeriods(perfHybridSampleMaxBytes(stack))
	return ringSpec{period: t.opts.Kernel.Period, interval: t.drainInterval(periods), stack: stack, hybrid: true}
}

// hybridRingBytes is the data area of a hybrid ring that holds more periods
// than a ring of whole copies (hybridDrainPeriods): what a ring of a
// hundred 8 KiB copies takes.
const hybridRingBytes = 1 << 20

// hybridDrainPeriods returns how many periods' samples a new hybrid ring
// with samples of at most size bytes holds: as many as hybridRingBytes
// holds, up to the target's longest drain interval, where that is more
// than a ring of whole copies would hold (stackRingPeriods), locked memory
// is not budgeted and the target's rings stay within bigRingBudget; else
// as many as a ring of copies that large (stackDrainPeriods). Each drain
// wakes the sampler, which costs as much as draining tens of samples: at
// 999 Hz a ring of 2.5 KiB copies then holds 280 periods, a drain every
// 280 ms rather than every 100.
func (t *Target) hybridDrainPeriods(size int) int {
	k, p := t.kernel, t.opts.Kernel.Period
	if k != nil && k.ringsMayGrow && p > 0 {
		longest := t.opts.Kernel.MaxDrainInterval
		if longest <= 0 {
			longest = target.DefaultMaxDrainInterval
		}
		n := min(int(longest/p), hybridRingBytes/size-perfRingSlack)
		if n > stackRingPeriods && k.ringBytes.Load()+hybridRingBytes <= bigRingBudget {
			return n
		}
	}
	return t.stackDrainPeriods(size - perfSampleMaxBytes(1) + 1)
}

// perfHybridSample is a decoded hybrid sample.
type perfHybridSample struct {
	perfChainSample
	// The user stack from the sampled SP upward is the stackLen bytes at
	// stackOff in the record.
	stackOff, stackLen int
	// touched is what touchLines read of the record before its parse.
	touched uint64
}

// parsePerfHybridSample decodes a PERF_RECORD_SAMPLE of sample type
// TID|TIME|CALLCHAIN|REGS_USER|STACK_USER with nregs registers, held whole
// in rec. s.regs points into regs. Every length is checked against the
// record's.
func parsePerfHybridSample(rec []byte, nregs int, regs []uint64, s *perfHybridSample) error {
	off, err := parseChainAndRegs(rec, nregs, regs, &s.perfChainSample)
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	if len(rec) < off+8 {
		return fmt.Errorf("sample record has no stack size")
	}
	size := le.Uint64(rec[off:])
	off += 8
	s.stackOff, s.stackLen = off, 0
	if size == 0 {
		return nil
	}
	if size > uint64(len(rec)-off) || len(rec)-off-int(size) < 8 {
		return fmt.Errorf("sample record too short for %d bytes of stack", size)
	}
	s.stackLen = int(min(le.Uint64(rec[off+int(size):]), size))
	return nil
}

// fillFromHybrid fills c from the hybrid sample of size bytes at ring
// position at: the walk of its stack copy, with the callers its callchain
// gives past the copy (unwind.Stack.Chain). A walk that needed more than
// both marks the thread's ring to go back to whole copies. inPlace is as
// for fillFromSample.
func (t *Target) fillFromHybrid(th *thread, at, size uint64, c *target.Capture, inPlace bool) error {
	k, r := t.kernel, th.kernel.ring
	rec := r.slice(at, int(size))
	if rec == nil {
		if size > uint64(len(k.hrec)) {
			return fmt.Errorf("sample record of %d bytes, more than a hybrid sample's %d", size, len(k.hrec))
		}
		rec = k.hrec[:size]
		r.readAt(rec, at)
	}
	s := &k.hybrid
	s.touched = touchLines(rec)
	if err := parsePerfHybridSample(rec, perfRegCount, k.regBuf[:], s); err != nil {
		return err
	}
	if len(s.regs) != perfRegCount {
		return errNoUserRegs
	}
	regs := perfRegs(s.regs)
	c.Thread, c.Regs, c.Stopped, c.Err = target.ThreadID(th.tid), regs, 0, nil
	c.Time = r.clock.at(s.time)
	chain, users := k.hchain[:0], 0
	for i := 0; i < s.nchain; i++ {
		v := binary.LittleEndian.Uint64(rec[s.chainOff+8*i:])
		if v >= perfContextMax {
			continue // a context marker
		}
		users++
		if len(chain) < cap(chain) {
			chain = append(chain, v)
		}
	}
	data := rec[s.stackOff : s.stackOff+s.stackLen]
	if c.Stack = c.Stack[:0]; !inPlace {
		c.Stack = append(c.Stack, data[:min(len(data), cap(c.Stack))]...)
		data = c.Stack
	}
	c.StackBase = regs.SP
	lo, hi, ok := t.stackBounds(regs.SP)
	if !ok {
		lo, hi = regs.SP, regs.SP+uint64(len(data))
	}
	st := unwind.Stack{Base: c.StackBase, Data: data, Lo: lo, Hi: hi, Chain: chain, ChainCut: users >= perfMaxStack() || users > len(chain)}
	c.PCs, c.Walk = t.walk(k.walker, regs, &st, c.PCs[:0], false)
	if c.Walk.Stop == unwind.StopReadFailed {
		th.kernel.needStack = true
	}
	t.noteWalk(th, c)
	return nil
}

// noteCopyReach counts, for a thread whose ring takes whole stack copies,
// whether the walk of a sample in it could have been made from a hybrid
// sample copying at most hybridMaxCopy bytes (copyReach): chainAfter such
// in a row (a walk that could not, or was cut, between none) move its ring
// to hybrid samples copying the most of them needed (with --unwind
// auto). A thread whose walks could not is tried again only after twice as
// many samples as the last time, up to chainAfterMax, so that the trials
// (a few walks of the copy) cost little where they fail.
func (t *Target) noteCopyReach(th *thread, c *target.Capture, st *unwind.Stack) {
	tk := &th.kernel
	if !t.plan().switchRings || tk.ring == nil || tk.ring.chain || tk.ring.hybrid {
		return
	}
	if tk.slimWait > 0 {
		tk.slimWait--
		return
	}
	need := t.copyReach(c, st)
	if need == 0 {
		tk.slim, tk.slimNeed = 0, 0
		tk.slimBackoff = min(2*tk.slimBackoff+1, chainAfterMax)
		tk.slimWait = tk.slimBackoff
		return
	}
	tk.slim++
	tk.slimNeed = max(tk.slimNeed, need)
	if tk.slim >= chainAfter {
		tk.slimBackoff = 0
	}
}

// copyReach returns how many bytes of stack a hybrid sample of the stack of
// c, whose copy st was walked whole into c, copies to be walked the same:
// what its walk read with some to spare (hybridCopy), or the smallest copy
// whose walk with the callchain the kernel would have taken (the frame
// records read from the copy) gives the same stack (unwind.Stack.Chain);
// 0 where that is more than hybridMaxCopy, or the walk was cut or read
// past the copy.
func (t *Target) copyReach(c *target.Capture, st *unwind.Stack) int {
	w := c.Walk
	if w.Stop != unwind.StopEnd || w.LeftCopy() || w.AfterSampleFrames > 0 || w.Top <= c.Regs.SP || st.Base != c.Regs.SP {
		return 0
	}
	if n := hybridCopy(int(min(w.Top-c.Regs.SP, 1<<30))); n != 0 {
		return n
	}
	k := t.kernel
	chain := append(k.hchain[:0], c.Regs.PC)
	sp, fp := c.Regs.SP, c.Regs.FP
	for len(chain) < cap(chain) && fp >= sp && fp-sp <= uint64(len(st.Data)) && uint64(len(st.Data))-(fp-sp) >= 16 {
		off := fp - sp
		chain = append(chain, binary.LittleEndian.Uint64(st.Data[off+8:]))
		fp = binary.LittleEndian.Uint64(st.Data[off:])
	}
	if len(chain) == cap(chain) {
		return 0
	}
	probe := *st
	probe.After, probe.Chain, probe.ChainCut = nil, chain, false
	if cap(k.probe) < len(c.PCs) {
		return 0
	}
	for n := hybridCopyStep; n <= hybridMaxCopy && n < len(st.Data); n *= 2 {
		probe.Data = st.Data[:n]
		pcs, res := t.walk(k.walker, c.Regs, &probe, k.probe[:0], false)
		if res.Stop == w.Stop && slices.Equal(pcs, c.PCs) {
			return n
		}
	}
	return 0
}

// touchLines reads a word of each 64-byte line of b and returns their sum,
// in one pass of loads that depend on nothing: the kernel wrote a sample's
// record on another CPU, out of this one's caches, and the walk's reads of
// its stack, each frame's address taken from the one before, would wait
// for the lines one at a time (at 999 Hz the parse and walk of
// bench/cbusy's hybrid samples cost about half as much so).
func touchLines(b []byte) uint64 {
	var s uint64
	for i := 0; i+8 <= len(b); i += 64 {
		s += binary.LittleEndian.Uint64(b[i:])
	}
	return s
}
