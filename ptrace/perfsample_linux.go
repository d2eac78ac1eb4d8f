//go:build linux && (amd64 || arm64)

package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/macprof/macprof/target"
	"golang.org/x/sys/unix"
)

// Kernel samples (target.Options.Kernel.Period). Instead of stopping a
// thread, a capture takes the newest sample the kernel recorded of it: a
// perf_event task-clock event per thread fires every period of the
// thread's CPU time, and in that timer interrupt, on the thread's own CPU,
// the kernel copies its user registers and the top of its user stack into
// a ring buffer mapped into macprof. No thread is stopped, no context is
// switched, and macprof reads the ring without a system call.

// ErrNoSample reports a thread the kernel has recorded no sample of since
// the previous capture (its period and the sampler's tick are out of
// phase, or it ran in the kernel the whole time and kernel samples are
// excluded).
var ErrNoSample = target.ErrNoSample

// perfStackBytes is how much of the stack a thread's kernel samples copy at
// first (the kernel copies less when the stack above SP is shallower):
// 8 KiB, the stops' first copy too, deep enough for most stacks and small
// enough that a sample costs the target little. A thread whose walks run
// past the copy has its event reopened with a larger copy (growRing), up to
// Options.Kernel.StackBytes (perfMaxStackBytes, the kernel's limit, by
// default); past the largest, a walk reads on after the sample
// (aftersample_linux.go).
const (
	perfStackBytes    = 8 << 10
	perfMaxStackBytes = target.DefaultKernelStackBytes
)

// maxStackBytes returns the largest stack copy t's kernel samples take:
// Options.Kernel.StackBytes within [perfStackBytes, the kernel's limit], a
// multiple of 8 as the kernel wants it.
func (t *Target) maxStackBytes() int {
	n := t.opts.Kernel.StackBytes
	if n == 0 {
		n = perfMaxStackBytes
	}
	return min(max(n, perfStackBytes), target.MaxKernelStackBytes) &^ 7
}

// perfSampleMaxBytes bounds the size of one sample record with a stack copy
// of stackBytes: the copy, the registers and the framing around them; with
// none (0), the kernel's callchain instead (perfChainSampleMaxBytes).
func perfSampleMaxBytes(stackBytes int) int {
	if stackBytes == 0 {
		return perfChainSampleMaxBytes()
	}
	return stackBytes + 512
}

// perfRingSlack is how many samples beyond one drain interval's worth a
// ring holds, for a drain that comes late.
const perfRingSlack = 4

// perfMinRingBytes is the smallest ring's data area (32 KiB, three
// samples): the size used when a user's locked-memory budget refuses a
// larger one. A sample that finds the ring full is dropped by the kernel;
// the sampler then counts its CPU time as lost (PERF_RECORD_LOST).
const perfMinRingBytes = 32 << 10

// ringSpec is what a thread's sampling event and ring are opened with.
type ringSpec struct {
	period   time.Duration // a sample every period of the thread's CPU time
	interval time.Duration // the drain interval: the ring holds its samples
	// stack is the bytes of user stack copied with each sample; 0 asks
	// for the kernel's user callchain (a frame-pointer walk) instead.
	stack int
	// bytes, when set, is the size of the data area, rather than what
	// interval's samples need (a ring grown by what its thread uses).
	bytes int
	// hybrid: the samples carry the kernel's callchain as well as stack
	// bytes of stack (hybrid_linux.go).
	hybrid bool
}

// sampleMaxBytes bounds the size of one sample record of a ring of spec.
func (s ringSpec) sampleMaxBytes() int {
	if s.hybrid {
		return perfHybridSampleMaxBytes(s.stack)
	}
	return perfSampleMaxBytes(s.stack)
}

// ringSpec returns the spec of a ring of t's with stack copies of stack
// bytes (holding stackDrainPeriods' samples), or with callchains (0).
func (t *Target) ringSpec(stack int) ringSpec {
	periods := t.chainDrainPeriods()
	if stack != 0 {
		periods = t.stackDrainPeriods(stack)
	}
	return ringSpec{period: t.opts.Kernel.Period, interval: t.drainInterval(periods), stack: stack}
}

// stackDrainPeriods returns how many periods' samples a new ring with
// stack copies of stack bytes holds: as many as the target's longest drain
// interval (Options.Kernel.MaxDrainInterval) takes, up to
// stackRingPeriods, else bigStackPeriods, where locked memory is not
// budgeted (CAP_IPC_LOCK) and the target's rings stay within
// bigRingBudget; else drainPeriods. Each wake-up costs the profiled
// threads a CPU for a while: at 999 Hz ten periods mean a drain every
// 10 ms, a hundred every 100 ms, and at 99 Hz a ring of ninety-nine
// periods lets a quiet machine's recording wake once a second, as with
// callchains; perf --call-graph dwarf drains its 516 KiB per-CPU rings
// half full.
func (t *Target) stackDrainPeriods(stack int) int {
	k, p := t.kernel, t.opts.Kernel.Period
	if k == nil || !k.ringsMayGrow || p <= 0 {
		return drainPeriods
	}
	longest := t.opts.Kernel.MaxDrainInterval
	if longest <= 0 {
		longest = target.DefaultMaxDrainInterval
	}
	for _, n := range []int{min(int(longest/p), stackRingPeriods), bigStackPeriods} {
		if n <= drainPeriods || time.Duration(n)*p > longest {
			continue
		}
		big := perfRingBytes(ringSpec{period: p, interval: time.Duration(n) * p, stack: stack})
		if n > bigStackPeriods && big > stackRingMaxBytes {
			continue // copies grown large: thirty periods
		}
		if k.ringBytes.Load()+int64(big) <= bigRingBudget {
			return n
		}
	}
	return drainPeriods
}

// probeRingSpec returns the spec of a thread's first ring with stack copies
// of stack bytes where --unwind auto may move it to callchains or hybrid
// samples after chainAfter walks (switchRing): one of probeRingBytes (a
// quarter of a ring of stackRingPeriods 8 KiB copies), drained more often,
// as the ring usually lives for a few tens of samples; the kernel clears
// and maps every page of a ring when it opens, and the walks of whole
// copies cost more than those of what follows. endProbe gives a thread
// still on it after probeSamples the ring ringSpec would have.
func (t *Target) probeRingSpec(stack int) ringSpec {
	periods := t.stackDrainPeriods(stack)
	if n := max(probeRingBytes/perfSampleMaxBytes(stack)-perfRingSlack, drainPeriods); n < periods {
		periods = n
	}
	return ringSpec{period: t.opts.Kernel.Period, interval: t.drainInterval(periods), stack: stack}
}

// probeRingBytes bounds a probe ring's data area (probeRingSpec);
// probeSamples is how many samples a thread's probe ring serves before
// endProbe: twice the walks that move it to callchains or hybrid samples.
const (
	probeRingBytes = 256 << 10
	probeSamples   = 2 * chainAfter
)

// endProbe reopens the probe ring of th, drained, which its walks did not
// move to callchains or hybrid samples within probeSamples, as the ring
// ringSpec gives its copies, to be drained as seldom as such rings are. The
// new event starts its first period afresh, counted as lost as in
// growRing. If the kernel refuses the ring, th keeps its probe ring.
func (t *Target) endProbe(th *thread) {
	th.kernel.probing = false
	t.reopenRing(th, t.ringSpec(th.kernel.ringStack))
}

// chainDrainPeriods returns how many periods' samples a new ring with
// callchains holds: chainRingPeriods, or as many as the target's longest
// drain interval (Options.Kernel.MaxDrainInterval: a second for record) takes, up
// to maxChainPeriods, where locked memory is not budgeted (CAP_IPC_LOCK),
// the target's rings stay within bigRingBudget and the sampler is not woken
// when a ring is half full (Options.Kernel.SamplesWaiting). At 999 Hz a hundred
// periods mean a drain every 100 ms; perf record -g drains its 516 KiB
// per-CPU rings half full.
func (t *Target) chainDrainPeriods() int {
	k, p := t.kernel, t.opts.Kernel.Period
	if k == nil || !k.ringsMayGrow || p <= 0 || k.waiting != nil {
		// (With wake-ups at half full, a ring grows once its thread
		// shows it busy: growChainRing.)
		return chainRingPeriods
	}
	n := min(int(t.opts.Kernel.MaxDrainInterval/p), maxChainPeriods)
	if n <= chainRingPeriods {
		return chainRingPeriods
	}
	big := perfRingBytes(ringSpec{period: p, interval: time.Duration(n) * p})
	if k.ringBytes.Load()+int64(big) > bigRingBudget {
		return chainRingPeriods
	}
	return n
}

// maxChainPeriods bounds the periods a ring with callchains holds
// (chainDrainPeriods): 2 MiB of the largest samples.
const maxChainPeriods = 1000

// bigStackPeriods is the periods a ring with stack copies holds where one
// of stackRingPeriods does not fit the budget (stackDrainPeriods);
// bigRingBudget bounds the data areas of a target's rings for rings that
// large (2 MiB each with 32 KiB copies and thirty periods).
const (
	bigStackPeriods = 30
	bigRingBudget   = 8 << 20
)

// stackRingPeriods bounds the periods a ring with stack copies holds
// (stackDrainPeriods): 1 MiB with 8 KiB copies, as a ring with callchains
// holds chainRingPeriods.
const stackRingPeriods = 100

// stackRingMaxBytes bounds a ring of more than bigStackPeriods periods: a
// hundred periods of copies up to 16 KiB.
const stackRingMaxBytes = 2 << 20

// perfRingBytes returns the size of the data area of a ring for spec: a
// power of two that holds the samples of one drain interval and
// perfRingSlack more, 128 KiB at 99 Hz and 999 Hz with 8 KiB copies and
// 100 ms drains. Each busy thread has a ring, in locked memory.
func perfRingBytes(spec ringSpec) int {
	if spec.bytes > 0 {
		return spec.bytes
	}
	samples := int(spec.interval/spec.period) + perfRingSlack
	n := perfMinRingBytes
	for n < samples*spec.sampleMaxBytes() {
		n *= 2
	}
	return n
}

// perfRing is one thread's sampling event and the ring it writes into.
type perfRing struct {
	fd   int
	mem  []byte                  // the whole mapping: metadata page, then data
	meta *unix.PerfEventMmapPage // in mem
	data []byte                  // the data area, a power of two long
	head uint64                  // data_head when reading began
	pos  uint64                  // the next record to read
	// chain: its samples hold the kernel's callchain, not a stack copy;
	// hybrid: both, the copy small (hybrid_linux.go).
	chain, hybrid bool
	// sampleMax bounds the size of one of its samples.
	sampleMax int
	// clock turns its samples' times into the captures' (zero: the
	// kernel times them on its own clock).
	clock sampleClock
	// interval is the drain interval it was sized for (0: not known).
	interval time.Duration
	// stopWatch, when set, ends the goroutine that wakes the sampler
	// when the ring is half full (watchRing).
	stopWatch func()
	// lost sums the samples the kernel's PERF_RECORD_LOST records said it
	// dropped (the ring was full), of the records read since takeLost.
	lost uint64
	// execs counts the exec records of its thread's process read from it,
	// from execBase, the execs the target had seen when it was opened.
	execs, execBase int
	// comms counts the comm records read from it (an exec or a thread's
	// rename in its process), which Threads takes (nameWatch).
	comms atomic.Uint32
	// named: its thread's name was read since it opened (nameWatch); a
	// rename before it opened wrote its comm record to no ring.
	named atomic.Bool
	// tid is its thread; name is that thread's name as of the record next
	// returned last: read when it opened, then set by the thread's comm
	// records (threadnames_linux.go), so that each sample drained from it
	// has the name in force when it was taken.
	tid  uint32
	name string
	// procName is a name read from /proc that no record gave yet
	// (drainedNames).
	procName string
}

// mmapRing maps size bytes of a perf_event file's ring; tests replace it
// to play a locked-memory budget.
var mmapRing = func(fd, size int) ([]byte, error) {
	return mmapShared(fd, size)
}

// openPerfRing opens a task-clock sampling event on thread tid that samples
// every spec.period of its CPU time, with user registers (perfRegsMask) and
// spec.stack bytes of user stack, and maps its ring (perfRingBytes, or
// perfMinRingBytes for perfStackBytes copies when the locked-memory budget
// allows no more; small reports that).
func openPerfRing(tid int, spec ringSpec) (r *perfRing, small bool, err error) {
	period, stackBytes := spec.period, spec.stack
	attr := unix.PerfEventAttr{
		Type:              unix.PERF_TYPE_SOFTWARE,
		Config:            unix.PERF_COUNT_SW_TASK_CLOCK,
		Sample:            uint64(period.Nanoseconds()),
		Sample_type:       unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME | unix.PERF_SAMPLE_REGS_USER | unix.PERF_SAMPLE_STACK_USER,
		Bits:              unix.PerfBitExcludeHv | unix.PerfBitComm | unix.PerfBitCommExec | unix.PerfBitUseClockID,
		Sample_regs_user:  perfRegsMask,
		Sample_stack_user: uint32(stackBytes),
		// Times on the clock Go's monotonic readings use (sampleClock).
		Clockid: unix.CLOCK_MONOTONIC,
	}
	if spec.hybrid {
		// The kernel's walk of the frame records and a small copy.
		attr.Sample_type |= unix.PERF_SAMPLE_CALLCHAIN
		attr.Bits |= unix.PerfBitExcludeCallchainKernel
		attr.Sample_max_stack = uint16(perfMaxStack())
	}
	if stackBytes == 0 {
		// The kernel's walk of the user stack's frame records, as
		// perf record -g takes it: no stack copied.
		attr.Sample_type = unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME | unix.PERF_SAMPLE_CALLCHAIN | unix.PERF_SAMPLE_REGS_USER
		attr.Bits |= unix.PerfBitExcludeCallchainKernel
		attr.Sample_max_stack = uint16(perfMaxStack())
	}
	attr.Size = uint32(unsafe.Sizeof(attr))
	clock := newSampleClock()
	fd, err := perfEventOpen(&attr, tid)
	if errors.Is(err, unix.EINVAL) {
		// A kernel before 4.1: samples timed on perf's own clock.
		attr.Bits &^= unix.PerfBitUseClockID
		clock = sampleClock{}
		fd, err = perfEventOpen(&attr, tid)
	}
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
		// Without the right to sample the kernel (perf_event_paranoid
		// 2 for a user), user-space samples only: a thread interrupted
		// in a system call is then not sampled.
		attr.Bits |= unix.PerfBitExcludeKernel
		fd, err = perfEventOpen(&attr, tid)
	}
	if err != nil {
		return nil, false, fmt.Errorf("perf_event_open on thread %d: %w", tid, err)
	}
	page := os.Getpagesize()
	pages := func(bytes int) int { return max(1, bytes/page) } // both powers of two
	dataPages := pages(perfRingBytes(spec))
	mem, err := mmapRing(fd, (1+dataPages)*page)
	if (errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOMEM)) && (stackBytes == perfStackBytes || stackBytes == 0) && dataPages > pages(perfMinRingBytes) {
		// Over the locked-memory budget (perf_event_mlock_kb and
		// RLIMIT_MEMLOCK, for a user without CAP_IPC_LOCK).
		small = true
		dataPages = pages(perfMinRingBytes)
		mem, err = mmapRing(fd, (1+dataPages)*page)
	}
	if err != nil {
		closeFD(fd)
		return nil, false, fmt.Errorf("map the sample ring of thread %d: %w", tid, err)
	}
	r, err = newRing(fd, mem, dataPages)
	if err != nil {
		return nil, false, fmt.Errorf("sample ring of thread %d: %w", tid, err)
	}
	r.chain, r.hybrid, r.interval, r.clock, r.sampleMax = stackBytes == 0, spec.hybrid && stackBytes != 0, spec.interval, clock, spec.sampleMaxBytes()
	r.tid = uint32(tid)
	return r, small, nil
}

// newRing returns the ring of the event fd mapped at mem, a metadata page
// and dataPages pages of data, or closes both if the kernel's metadata
// does not describe such a data area.
func newRing(fd int, mem []byte, dataPages int) (*perfRing, error) {
	page := os.Getpagesize()
	r := &perfRing{fd: fd, mem: mem, meta: (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0]))}
	off, size := r.meta.Data_offset, r.meta.Data_size
	if off == 0 && size == 0 { // kernels before 4.1 leave them zero
		off, size = uint64(page), uint64(dataPages*page)
	}
	if size == 0 || size&(size-1) != 0 || off+size > uint64(len(mem)) {
		r.close()
		return nil, fmt.Errorf("data area %d bytes at %d in a %d-byte mapping", size, off, len(mem))
	}
	r.data = mem[off : off+size]
	return r, nil
}

// close unmaps the ring and closes the event.
func (r *perfRing) close() {
	if r.stopWatch != nil {
		r.stopWatch()
	}
	munmap(r.mem)
	closeRaw(r.fd) // raw, as the open and the mapping are (closeRaw)
}

// begin starts reading the records the kernel wrote since the last
// consume: next returns them one by one, and consume frees those read.
func (r *perfRing) begin() {
	r.head = atomic.LoadUint64(&r.meta.Data_head)
	r.pos = r.meta.Data_tail
	if r.head-r.pos > uint64(len(r.data)) {
		// More than the ring holds: not a state the kernel leaves. Drop
		// it all rather than read it.
		r.pos = r.head
	}
}

// next returns the position and size of the next sample record, skipping
// records of other types (a PERF_RECORD_LOST's count is added to lost, an
// exec's to execs);
// the caller reads it with readAt.
func (r *perfRing) next() (at, size uint64, ok bool) {
	for {
		at, size, typ, ok := r.nextRecord()
		if !ok || typ == unix.PERF_RECORD_SAMPLE {
			return at, size, ok
		}
		if typ == unix.PERF_RECORD_COMM {
			r.comms.Add(1)
			r.noteComm(at, size)
			// An exec (the comm record marked as such; a rename is
			// not): the samples after it are another program's.
			var misc [2]byte
			r.readAt(misc[:], at+4)
			if binary.LittleEndian.Uint16(misc[:])&unix.PERF_RECORD_MISC_COMM_EXEC != 0 {
				r.execs++
			}
		}
		if typ == unix.PERF_RECORD_LOST && size >= perfLostRecordLen {
			// The header, the event's id, then how many samples
			// were dropped.
			var n [8]byte
			r.readAt(n[:], at+16)
			r.lost += min(binary.LittleEndian.Uint64(n[:]), maxLostPerRecord)
		}
	}
}

// perfLostRecordLen is the size of a PERF_RECORD_LOST without sample_id;
// maxLostPerRecord bounds the count one is believed for (a year of samples
// at 10 kHz), so that a hostile or torn record cannot overflow the sum.
const (
	perfLostRecordLen = 24
	maxLostPerRecord  = 1 << 38
)

// takeLost returns the samples the ring's PERF_RECORD_LOST records said
// were dropped, read since the last call.
func (r *perfRing) takeLost() int64 {
	n := r.lost
	r.lost = 0
	return int64(n)
}

// nextRecord returns the position, size and type of the next record.
// Records are framed by sizes the kernel writes; a size that does not fit
// drops the rest.
func (r *perfRing) nextRecord() (at, size uint64, typ uint32, ok bool) {
	mask := uint64(len(r.data) - 1)
	if r.pos+8 > r.head {
		return 0, 0, 0, false
	}
	i := r.pos & mask // the kernel's headers are 8-byte aligned: never split
	if i+8 > uint64(len(r.data)) {
		r.pos = r.head
		return 0, 0, 0, false
	}
	typ = binary.LittleEndian.Uint32(r.data[i:])
	n := uint64(binary.LittleEndian.Uint16(r.data[i+6:]))
	if n < 8 || n%8 != 0 || n > r.head-r.pos {
		r.pos = r.head
		return 0, 0, 0, false
	}
	at = r.pos
	r.pos += n
	return at, n, typ, true
}

// newest finds the newest sample among the records in the ring and returns
// its position and size; the caller reads it (readAt) and then calls
// consume, which frees every record.
func (r *perfRing) newest() (at, size uint64, ok bool) {
	r.begin()
	for {
		a, n, more := r.next()
		if !more {
			break
		}
		at, size, ok = a, n, true
	}
	r.pos = r.head
	return at, size, ok
}

// unread reports whether the kernel wrote records not yet consumed.
func (r *perfRing) unread() bool {
	return atomic.LoadUint64(&r.meta.Data_head) != r.meta.Data_tail
}

// readAt copies len(dst) bytes of the ring from position at (which may
// wrap around its end) into dst.
func (r *perfRing) readAt(dst []byte, at uint64) {
	i := at & uint64(len(r.data)-1)
	n := copy(dst, r.data[i:])
	copy(dst[n:], r.data)
}

// slice returns the n bytes of the ring at position at where they do not
// wrap around its end, or nil. They are the kernel's to write again once
// consumed.
func (r *perfRing) slice(at uint64, n int) []byte {
	i := at & uint64(len(r.data)-1)
	if n < 0 || uint64(n) > uint64(len(r.data))-i {
		return nil
	}
	return r.data[i : i+uint64(n) : i+uint64(n)]
}

// consume frees the records read since begin (all that newest saw) for the
// kernel to write again.
func (r *perfRing) consume() { atomic.StoreUint64(&r.meta.Data_tail, r.pos) }

// perfSample is a decoded kernel sample.
type perfSample struct {
	tid  uint32
	time uint64   // on the ring's clock
	regs []uint64 // the registers of perfRegsMask, in bit order; empty for a kernel thread
	// The user stack from the sampled SP upward is the stackLen bytes at
	// stackOff in the record.
	stackOff, stackLen int
}

// perfSampleHeadLen is how many bytes of a sample parsePerfSampleHead
// needs: header, pid and tid, time, the registers' ABI and values, the
// stack's size.
func perfSampleHeadLen(nregs int) int { return 8 + 8 + 8 + 8 + 8*nregs + 8 }

// parsePerfSampleHead decodes the fixed part of a PERF_RECORD_SAMPLE of
// sample type TID|TIME|REGS_USER|STACK_USER with nregs registers, recSize bytes
// long: head holds its first bytes (perfSampleHeadLen, or all of a shorter
// record). dyn reads the stack's dynamic size, the 8 bytes at the offset it
// is given. s.regs points into regs. Every length is checked against
// recSize.
func parsePerfSampleHead(head []byte, recSize, nregs int, regs []uint64, dyn func(off int) uint64, s *perfSample) error {
	le := binary.LittleEndian
	if recSize < 8+8+8+8 || len(head) < 8+8+8+8 {
		return fmt.Errorf("sample record of %d bytes", recSize)
	}
	if size := int(le.Uint16(head[6:])); size != recSize {
		return fmt.Errorf("sample record says %d bytes, has %d", size, recSize)
	}
	s.tid = le.Uint32(head[12:])
	s.time = le.Uint64(head[16:])
	off := 24
	abi := le.Uint64(head[off:])
	off += 8
	s.regs = regs[:0]
	if abi != unix.PERF_SAMPLE_REGS_ABI_NONE {
		if recSize < off+8*nregs || len(head) < off+8*nregs || cap(regs) < nregs {
			return fmt.Errorf("sample record too short for %d registers", nregs)
		}
		for i := 0; i < nregs; i++ {
			s.regs = append(s.regs, le.Uint64(head[off+8*i:]))
		}
		off += 8 * nregs
	}
	if recSize < off+8 || len(head) < off+8 {
		return errors.New("sample record has no stack size")
	}
	size := le.Uint64(head[off:])
	off += 8
	s.stackOff, s.stackLen = off, 0
	if size == 0 {
		return nil
	}
	if size > uint64(recSize-off) || recSize-off-int(size) < 8 {
		return fmt.Errorf("sample record too short for %d bytes of stack", size)
	}
	s.stackLen = int(min(dyn(off+int(size)), size))
	return nil
}

// parsePerfSample decodes a whole sample record held in rec (see
// parsePerfSampleHead); the stack is rec[s.stackOff:][:s.stackLen].
func parsePerfSample(rec []byte, nregs int, regs []uint64, s *perfSample) error {
	head := rec[:min(len(rec), perfSampleHeadLen(nregs))]
	return parsePerfSampleHead(head, len(rec), nregs, regs, func(off int) uint64 {
		return binary.LittleEndian.Uint64(rec[off:])
	}, s)
}

// perfRegCount is the number of registers in perfRegsMask.
var perfRegCount = bits.OnesCount64(perfRegsMask)
