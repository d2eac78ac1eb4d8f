//go:build linux && (amd64 || arm64)

package ptrace

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// Kernel samples with callchains. Where frame pointers suffice, a thread's
// samples carry the kernel's own walk of its frame records (the callchain
// perf record -g takes) instead of a copy of its stack: the kernel copies
// 16 bytes per frame rather than 8-32 KiB, and a ring holds a hundred
// periods' samples rather than ten, so the sampler wakes ten times less
// often. Frame pointers suffice when the unwind tables say every frame of
// the thread's samples keeps a frame record, or its code is known to keep
// them (Go); with --unwind fp they are all there is.
//
// With --unwind auto a thread's ring starts with stack copies (walked with
// the tables), and is reopened with callchains once chainAfter samples in
// a row were walked exactly by frame records (unwind.CheckChain); a
// callchain the tables find a frame without a record in is cut there
// (marked truncated) and the ring goes back to stack copies, to try again
// after twice as many samples. Threads whose walks are not exact but read
// little of the copy take hybrid samples (hybrid_linux.go). With --unwind
// cfi rings always copy stacks.

// Samples of stack walks exact by frame records before a thread's ring is
// reopened with callchains, at first and at most (after each return to
// stack copies, twice as many).
const (
	chainAfter    = 32
	chainAfterMax = 4096
)

// chainRingPeriods is how many periods' samples a ring with callchains
// holds at least (the drain interval's length in periods,
// target.DrainInterval); chainDrainPeriods may choose more.
const chainRingPeriods = 100

// perfMaxStack returns the deepest callchain asked of the kernel: its
// limit (kernel.perf_event_max_stack, 127 unless changed), which a larger
// sample_max_stack would exceed (EOVERFLOW), and at most 127 so that
// samples stay small.
var perfMaxStack = sync.OnceValue(func() int {
	const most = 127
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_max_stack")
	if err != nil {
		return most
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 1 {
		return most
	}
	return min(n, most)
})

// perfMaxContexts bounds the context markers in a callchain
// (kernel.perf_event_max_contexts_per_stack's default, 8); with kernel
// callchains excluded there is one, PERF_CONTEXT_USER.
const perfMaxContexts = 8

// perfChainSampleMaxBytes bounds a sample record with a callchain: header,
// pid and tid, time, the chain's length and entries, the registers' ABI
// and values.
func perfChainSampleMaxBytes() int {
	return 8 + 8 + 8 + 8 + 8*(perfMaxStack()+perfMaxContexts) + 8 + 8*perfRegCount
}

// perfContextMax is the lowest context marker in a callchain
// (PERF_CONTEXT_MAX, -4095): entries at or above it are markers.
const perfContextMax = uint64(1<<64 + unix.PERF_CONTEXT_MAX)

// perfChainSample is a decoded kernel sample with a callchain.
type perfChainSample struct {
	tid  uint32
	time uint64   // on the ring's clock
	regs []uint64 // the registers of perfRegsMask; empty for a kernel thread
	// The chain's nchain entries (addresses and context markers) are the
	// 8-byte words at chainOff in the record.
	chainOff, nchain int
}

// parsePerfChainSample decodes a PERF_RECORD_SAMPLE of sample type
// TID|TIME|CALLCHAIN|REGS_USER with nregs registers, held whole in rec. s.regs
// points into regs. Every length is checked against the record's.
func parsePerfChainSample(rec []byte, nregs int, regs []uint64, s *perfChainSample) error {
	_, err := parseChainAndRegs(rec, nregs, regs, s)
	return err
}

// parseChainAndRegs decodes the fields a sample with a callchain starts
// with (header, TID, TIME, CALLCHAIN, REGS_USER) into s and returns the
// offset in rec of what follows the registers.
func parseChainAndRegs(rec []byte, nregs int, regs []uint64, s *perfChainSample) (int, error) {
	le := binary.LittleEndian
	if len(rec) < 8+8+8+8 {
		return 0, fmt.Errorf("sample record of %d bytes", len(rec))
	}
	if size := int(le.Uint16(rec[6:])); size != len(rec) {
		return 0, fmt.Errorf("sample record says %d bytes, has %d", size, len(rec))
	}
	s.tid = le.Uint32(rec[12:])
	s.time = le.Uint64(rec[16:])
	n := le.Uint64(rec[24:])
	off := 32
	if n > uint64(len(rec)-off)/8 {
		return 0, fmt.Errorf("sample record too short for a callchain of %d", n)
	}
	s.chainOff, s.nchain = off, int(n)
	off += 8 * int(n)
	if len(rec) < off+8 {
		return 0, fmt.Errorf("sample record has no register ABI")
	}
	abi := le.Uint64(rec[off:])
	off += 8
	s.regs = regs[:0]
	if abi != unix.PERF_SAMPLE_REGS_ABI_NONE {
		if len(rec) < off+8*nregs || cap(regs) < nregs {
			return 0, fmt.Errorf("sample record too short for %d registers", nregs)
		}
		for i := 0; i < nregs; i++ {
			s.regs = append(s.regs, le.Uint64(rec[off+8*i:]))
		}
		off += 8 * nregs
	}
	return off, nil
}

// fillFromChain fills c from the callchain sample of size bytes at ring
// position at: the chain's user addresses, cut where the unwind tables find
// a frame without a frame record (marked truncated, and the thread's ring
// marked to go back to stack copies).
func (t *Target) fillFromChain(th *thread, at, size uint64, c *target.Capture) error {
	k := t.kernel
	if size > uint64(len(k.rec)) {
		return fmt.Errorf("sample record of %d bytes, more than a callchain's %d", size, len(k.rec))
	}
	rec := k.rec[:size]
	th.kernel.ring.readAt(rec, at)
	s := &k.chain
	if err := parsePerfChainSample(rec, perfRegCount, k.regBuf[:], s); err != nil {
		return err
	}
	if len(s.regs) != perfRegCount {
		return errNoUserRegs
	}
	regs := perfRegs(s.regs)
	c.Thread, c.Regs, c.Stopped, c.Err = target.ThreadID(th.tid), regs, 0, nil
	c.Time = th.kernel.ring.clock.at(s.time)
	c.Stack, c.StackBase = c.Stack[:0], regs.SP
	limit := min(cap(c.PCs), t.opts.MaxFrames)
	pcs, users := c.PCs[:0], 0
	for i := 0; i < s.nchain; i++ {
		v := binary.LittleEndian.Uint64(rec[s.chainOff+8*i:])
		if v >= perfContextMax {
			continue // a context marker
		}
		users++
		if len(pcs) < limit {
			pcs = append(pcs, v)
		}
	}
	res := unwind.Result{Stop: unwind.StopEnd}
	if users >= perfMaxStack() || users > len(pcs) {
		res.Stop = unwind.StopMaxFrames
	}
	if t.plan().tables {
		if r := t.resolver(); r != nil {
			check := unwind.CheckChain(pcs, r.NoWait())
			if check.Trusted < len(pcs) || !check.Whole {
				pcs, res.Stop = pcs[:check.Trusted], unwind.StopNoFrameRecord
				th.kernel.needStack = true
			}
		}
	}
	res.Hash = unwind.HashPCs(pcs)
	c.PCs, c.Walk = pcs, res
	return nil
}

// noteWalk counts, for a thread whose ring copies stacks, whether the walk
// of a sample in it was exact by frame records: chainAfter such in a row
// (none with a frame without a record between them) move its ring to
// callchains (with --unwind auto).
func (t *Target) noteWalk(th *thread, c *target.Capture) {
	if !t.plan().switchRings || c.Walk.Stop != unwind.StopEnd {
		return
	}
	r := t.resolver()
	if r == nil {
		return
	}
	switch check := unwind.CheckChain(c.PCs, r.NoWait()); {
	case check.Exact(len(c.PCs)):
		th.kernel.exact++
	case check.Trusted < len(c.PCs) || !check.Whole:
		th.kernel.exact = 0
	}
}

// framePointersOnly reports whether every address of pcs lies in an object
// known to keep frame pointers in all its code (a Go binary), waiting for
// those objects' tables as a kernel sample's walk does (the thread runs).
func (t *Target) framePointersOnly(pcs []uint64) bool {
	r := t.tables.res.Load()
	if r == nil || len(pcs) == 0 {
		return false
	}
	for _, pc := range pcs {
		if _, fp := r.Rule(pc); !fp {
			return false
		}
	}
	return true
}

// switchRing reopens the ring of th, drained, with callchains where its
// walks were exact by frame records long enough, else with hybrid samples
// where hybrid samples would have served them long enough
// (hybrid_linux.go), or with whole stack copies where a callchain met a
// frame without a record or a hybrid sample's walk was cut; it reports
// whether it did. The new event starts its first period afresh (the sampler counts
// that part period as lost). If the kernel refuses the new ring,
// the thread keeps the one it has.
func (t *Target) switchRing(th *thread) bool {
	tk := &th.kernel
	var spec ringSpec
	back := false
	need := max(tk.exactNeed, chainAfter)
	switch {
	case (tk.ring.chain || tk.ring.hybrid) && tk.needStack:
		spec, back = t.ringSpec(max(tk.ringStack, perfStackBytes)), true
	case !tk.ring.chain && t.plan().switchRings && tk.exact >= need:
		spec = t.ringSpec(0)
	case !tk.ring.chain && !tk.ring.hybrid && t.plan().switchRings && tk.slim >= need && tk.slimNeed > 0:
		spec = t.hybridSpec(tk.slimNeed)
	default:
		tk.slim, tk.slimNeed = 0, 0
		return false
	}
	ok := t.reopenRing(th, spec)
	if ok && back {
		tk.exactNeed = min(2*need, chainAfterMax)
		tk.ringStack = spec.stack
	}
	tk.needStack, tk.exact, tk.slim, tk.slimNeed = false, 0, 0, 0
	return ok
}

// drainInterval returns how often t's rings holding periods periods'
// samples must be drained.
func (t *Target) drainInterval(periods int) time.Duration {
	return target.DrainInterval(t.opts.Kernel.Period, t.opts.Kernel.MaxDrainInterval, periods)
}

// drainPeriods is how many periods' samples a ring with stack copies holds.
const drainPeriods = 10
