//go:build linux && (amd64 || arm64)

package ptrace

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"github.com/macprof/macprof/unwind/cfi"
	"golang.org/x/sys/unix"
)

// Process rings (target.Options.Kernel.ProcessRings): the kernel samples of a
// launched command through one sampling event per CPU, inherited by every
// thread it creates, opened while it is stopped at its exec, before it runs
// an instruction of its own. This is what perf record -g does for a
// command: no thread is stopped or gets an event of its own, a new thread
// is sampled from its first period, and while the command runs macprof
// only wakes to move what the rings hold into its own memory. The price is
// one kind of sample for every thread, the kernel's walk of frame records
// (callchains), so they are used only for a command whose code keeps frame
// pointers throughout (a static Go binary, or any with --unwind fp).
//
// While the command runs, Keep copies the rings into macprof's memory as
// they are. The listing of the threads (Threads) that follows its exit, or
// the end of the recording, moves every sample kept and in the rings into
// samples, a list per thread, and frees the rings; DrainSamples then hands
// out a thread's. The samples of a thread that
// exited before the listing make it a departed thread, listed once, whose
// CPU time is as many periods as it has samples if it was never listed
// alive. Every process the command starts inherits the events: their
// samples are kept too, each with its process (target.Capture.PID), so
// that a child that lives for a few milliseconds is profiled as fully as
// the command (target.DescendantSampler). Each sample is looked up in the
// images its process had when it was taken (imageversions_linux.go).

// Descendant rings (descendantRingsFit): a launched command whose own code
// is walked from stack copies on its threads' rings of their own gets
// process rings too, whose samples of the command's own process are
// dropped: they sample its descendants, each from its first period, as the
// process rings of a command with frame pointers do. Their samples copy
// the user registers and stack, as perf record --call-graph dwarf takes
// them, and each copy is walked with the unwind tables of its process's
// images at its time (collectStacks): a child may be built without frame
// pointers (python3 under sh -c, compilers under make), which callchains
// cannot walk. Without them a child was sampled only once record's look
// for new children (every 100 ms) found it, and children shorter than that
// were not sampled at all.

// processRings is a launched command's per-CPU inherited events and the
// samples last read from them.
type processRings struct {
	mu    sync.Mutex
	pid   int
	rings []*perfRing
	// kidsOnly: descendant rings, which drop the samples of process pid
	// (its threads have rings of their own). exits holds, from the last
	// collect, the CPU time of each thread of a descendant that exited,
	// from the kernel's read records of its events (inherit_stat).
	kidsOnly bool
	exits    map[uint32]threadExit
	// lost holds, from the last collect, the samples the kernel's
	// PERF_RECORD_LOST records said it dropped (a ring was full), by the
	// thread it wrote each record in the context of.
	lost map[uint32]threadLost
	// filtered: a BPF program on every ring's event drops the samples
	// of process pid in the kernel (kidsfilter_linux.go).
	filtered bool
	// stack, when set, is the bytes of user stack each sample copies
	// (with the user registers) instead of a callchain: collect walks
	// each copy with walker and the unwind tables of its process's
	// images at its time (fpOnly: by frame records alone). ends holds,
	// per ring, where collect's first pass stopped reading.
	stack  int
	walker *unwind.Walker
	fpOnly bool
	ends   []uint64
	sample perfSample
	regBuf [8]uint64
	// samples are those read at the last collect, in the order read (each
	// CPU's oldest first) or, if a thread's were not, by time (order);
	// heads holds each thread's first and last sample, whose next links
	// the rest, oldest first. pcs holds their addresses, at
	// most maxFrames each.
	samples   []ringSample
	heads     map[uint32]sampleList
	unordered bool // some thread's list is not oldest first (order)
	pcs       []uint64
	maxFrames int
	rec       []byte // a record that wraps around its ring's end
	// hist holds the versions of the images of the command's processes;
	// takenRes the unwind-table resolvers of the samples take last gave
	// out; vdso reads the command's [vdso].
	hist     imageHistory
	names    threadNames
	takenRes []*cfi.Resolver
	vdso     images.MemoryReader
	// kept holds the process's sample records moved out of the rings by
	// keep, as the kernel wrote them, in chunks of keptChunk bytes;
	// keptBytes sums them, and keptRecords counts their samples; spare
	// holds chunks parsed since, for keep to fill again.
	kept        [][]byte
	keptBytes   int
	keptRecords int
	spare       [][]byte
	// mapped: a record of a new executable mapping of the process was
	// read since the last mappedSince.
	mapped atomic.Bool
	// sampledAt is when a collect last read a sample (Unix ns), so that
	// the rings of a command that starts processes are drained with a
	// margin (recentlySampled).
	sampledAt atomic.Int64
	// clock turns the samples' times into the captures' (zero: a kernel
	// that cannot time them on CLOCK_MONOTONIC).
	clock sampleClock
}

// processRecordMin is the smallest sample record a process ring holds:
// header, pid and tid, time, the chain's length.
const processRecordMin = 8 + 8 + 8 + 8

// processRingBytes is each CPU's ring at first: half of it holds the
// largest samples of a busy thread for 250 ms at 999 Hz, and a ring is
// drained when half full (watchRing). Together they stay within
// bigRingBudget; a machine with many CPUs gets smaller rings, down to
// processRingMin.
const (
	processRingBytes = 512 << 10
	processRingMin   = 64 << 10
)

// stackRingBytes is each CPU's ring of descendant rings with stack copies:
// 124 samples of 16 KiB copies, drained when half of them could be written
// (DrainInterval): every 60 ms at 999 Hz; within bigRingBudget as
// processRingBytes.
const stackRingBytes = 2 << 20

// processRingsFit reports whether a command at path, run with opts, is
// sampled through process rings: opts asks for them, with kernel samples,
// and every frame of it is walked by its frame record
// (walkPlan.framesAllByRecords).
func processRingsFit(path string, opts target.Options) bool {
	if !opts.Kernel.ProcessRings || !opts.Continuous || opts.Kernel.Period <= 0 {
		return false
	}
	return walkPlanOf(opts.Unwind).framesAllByRecords(path)
}

// descendantRingsFit reports whether a command run with opts that is not
// sampled through process rings (processRingsFit) gets descendant rings:
// opts asks for process rings, with kernel samples.
func descendantRingsFit(opts target.Options) bool {
	return opts.Kernel.ProcessRings && opts.Continuous && opts.Kernel.Period > 0
}

// staticGo reports whether path is an ELF Go binary without an
// interpreter (no cgo, no shared libraries).
func staticGo(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return f.Section(".gopclntab") != nil || f.Section(".go.buildinfo") != nil
}

// onlineCPUs returns the CPUs the kernel has online, from
// /sys/devices/system/cpu/online ("0-3,6"), bounded by maxCPUs.
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, err
	}
	return parseCPUList(strings.TrimSpace(string(b)))
}

// maxCPUs bounds the CPUs parseCPUList accepts, so that a list cannot ask
// for unbounded events.
const maxCPUs = 4096

// parseCPUList parses a kernel CPU list ("0-3,6").
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("CPU list %q: %w", s, err)
			}
		}
		if a < 0 || b < a || b >= maxCPUs || len(cpus)+b-a+1 > maxCPUs {
			return nil, fmt.Errorf("CPU list %q: bad range %q", s, part)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("CPU list %q: no CPU", s)
	}
	return cpus, nil
}

// openProcessRings opens, for process pid (stopped at its exec), one
// inherited task-clock sampling event per online CPU with a callchain and
// the time per sample and records of forks, execs and executable mappings
// (with build IDs where the kernel gives them), and maps their rings: processRingBytes each, within
// bigRingBudget, halved while the kernel refuses them for want of locked
// memory, down to processRingMin. kidsOnly opens descendant rings; stack,
// when set, has each sample copy that many bytes of user stack with the
// user registers instead of the callchain (stackRingBytes rings), halved
// with the rings down to perfStackBytes.
func openProcessRings(pid int, period, maxFrames int64, kidsOnly bool, stack int) (*processRings, error) {
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, fmt.Errorf("process rings: %w", err)
	}
	size := processRingBytes
	if stack > 0 {
		size = stackRingBytes
	}
	for size > processRingMin && len(cpus)*size > bigRingBudget {
		size /= 2
	}
	for {
		p, err := openProcessRingsSized(pid, cpus, period, size, kidsOnly, stack)
		if err == nil {
			p.maxFrames = int(maxFrames)
			p.names.seed(pid, readComm(pid, pid))
			return p, nil
		}
		if size <= processRingMin || !(errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOMEM)) {
			return nil, err
		}
		size /= 2
		if stack > perfStackBytes {
			// Smaller copies first, so that a ring still holds as many
			// samples and is not drained every few periods.
			stack /= 2
		}
	}
}

func openProcessRingsSized(pid int, cpus []int, period int64, size int, kidsOnly bool, stack int) (*processRings, error) {
	attr := unix.PerfEventAttr{
		Type:        unix.PERF_TYPE_SOFTWARE,
		Config:      unix.PERF_COUNT_SW_TASK_CLOCK,
		Sample:      uint64(period),
		Sample_type: unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME | unix.PERF_SAMPLE_CALLCHAIN,
		Bits: unix.PerfBitExcludeHv | unix.PerfBitExcludeCallchainKernel | unix.PerfBitInherit |
			unix.PerfBitMmap | unix.PerfBitMmap2 | unix.PerfBitComm | unix.PerfBitCommExec | unix.PerfBitTask | unix.PerfBitSampleIDAll | perfBitBuildID,
		Sample_max_stack: uint16(perfMaxStack()),
		// Times on the clock Go's monotonic readings use, so that a
		// sample's time is known (sampleClock).
		Clockid: unix.CLOCK_MONOTONIC,
	}
	attr.Bits |= unix.PerfBitUseClockID
	if stack > 0 {
		// Stack copies, as perf record --call-graph dwarf takes them:
		// walked with the unwind tables, they reach through code
		// built without frame pointers.
		attr.Sample_type = unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME | unix.PERF_SAMPLE_REGS_USER | unix.PERF_SAMPLE_STACK_USER
		attr.Sample_regs_user, attr.Sample_stack_user = perfRegsMask, uint32(stack)
		attr.Bits &^= unix.PerfBitExcludeCallchainKernel
		attr.Sample_max_stack = 0
	}
	attr.Size = uint32(unsafe.Sizeof(attr))
	p := &processRings{pid: pid, rec: make([]byte, processRecordMax()), kidsOnly: kidsOnly, stack: stack}
	if stack > 0 {
		p.rec = make([]byte, perfSampleMaxBytes(stack))
	}
	if kidsOnly {
		// Each descendant's thread that exits writes a record of
		// its count, the CPU time it used, into the rings: what its
		// samples do not account for is then known.
		attr.Bits |= unix.PerfBitInheritStat
		p.exits = make(map[uint32]threadExit)
	}
	p.clock = newSampleClock()
	page := os.Getpagesize()
	prog := -1
	if kidsOnly {
		if fd, err := loadDropProcess(pid); err == nil {
			prog = fd
			defer closeFD(prog) // each event holds its own reference
		}
	}
	p.filtered = prog >= 0
	for _, cpu := range cpus {
		fd, err := perfEventOpenCPU(&attr, pid, cpu)
		if errors.Is(err, unix.EINVAL) && attr.Bits&perfBitBuildID != 0 {
			// A kernel before 5.12: mappings without build IDs.
			attr.Bits &^= perfBitBuildID
			fd, err = perfEventOpenCPU(&attr, pid, cpu)
		}
		if errors.Is(err, unix.EINVAL) && attr.Bits&unix.PerfBitUseClockID != 0 {
			// A kernel before 4.1: samples on perf's own clock, their
			// times unknown to the captures.
			attr.Bits &^= unix.PerfBitUseClockID
			p.clock = sampleClock{}
			fd, err = perfEventOpenCPU(&attr, pid, cpu)
		}
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			// User-space samples only, as openPerfRing.
			attr.Bits |= unix.PerfBitExcludeKernel
			fd, err = perfEventOpenCPU(&attr, pid, cpu)
		}
		if errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENXIO) {
			continue // offline since the list was read
		}
		if err != nil {
			p.close()
			return nil, fmt.Errorf("perf_event_open on process %d, CPU %d: %w", pid, cpu, err)
		}
		if prog >= 0 && setDropProcess(fd, prog) != nil {
			p.filtered = false
		}
		dataPages := max(1, size/page)
		mem, err := mmapRing(fd, (1+dataPages)*page)
		if err != nil {
			closeFD(fd)
			p.close()
			return nil, fmt.Errorf("map the sample ring of process %d, CPU %d: %w", pid, cpu, err)
		}
		r, err := newRing(fd, mem, dataPages)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("sample ring of process %d, CPU %d: %w", pid, cpu, err)
		}
		r.chain = true
		p.rings = append(p.rings, r)
	}
	if len(p.rings) == 0 {
		return nil, fmt.Errorf("process rings of process %d: no CPU online", pid)
	}
	// Every record is at least processRecordMin bytes: these hold what
	// the rings hold, and grow with what keep keeps.
	total := 0
	for _, r := range p.rings {
		total += len(r.data)
	}
	p.heads = make(map[uint32]sampleList)
	if stack > 0 {
		// A sample record holds its whole copy: these hold a full
		// read of the rings with 64 frames a sample (and grow if
		// ever they must).
		n := total/stack + 16
		p.samples, p.pcs, p.ends = make([]ringSample, 0, n), make([]uint64, 0, 64*n), make([]uint64, len(p.rings))
		return p, nil
	}
	p.samples = make([]ringSample, 0, total/processRecordMin)
	p.pcs = make([]uint64, 0, total/8)
	if kidsOnly {
		return p, nil // read at each listing, never kept
	}
	// The first chunk is faulted in now, before the command runs: a page
	// first touched while it runs costs a fault, which was most of what
	// keeping its samples cost.
	first := make([]byte, keptFirst)
	for i := 0; i < len(first); i += page {
		first[i] = 1
	}
	p.kept = append(p.kept, first[:0])
	return p, nil
}

// perfBitBuildID is perf_event_attr's build_id bit: MMAP2 records carry
// the mapped file's build ID rather than its device and inode.
const perfBitBuildID = 1 << 34

// processRecordMax bounds a process ring's sample record.
func processRecordMax() int {
	return processRecordMin + 8*(perfMaxStack()+perfMaxContexts)
}

// watch wakes wake when any ring is half full, and reports whether every
// ring is watched.
func (p *processRings) watch(wake func()) bool {
	all := true
	for _, r := range p.rings {
		stop, err := watchRing(r, wake)
		if err != nil {
			all = false
			continue
		}
		r.stopWatch = stop
	}
	return all
}

// close closes every ring.
func (p *processRings) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rings {
		r.close()
	}
	p.rings = nil
}

// processRings returns t's process rings, or nil.
func (t *Target) processRings() *processRings {
	if t.kernel == nil {
		return nil
	}
	return t.kernel.proc
}

// descendantRings returns t's descendant rings, or nil.
func (t *Target) descendantRings() *processRings {
	if t.kernel == nil {
		return nil
	}
	return t.kernel.kids
}

// useDescendantRings makes p, opened for t's process at its exec with
// kidsOnly, the source of the samples of t's descendants (it closes p if t
// takes no kernel samples). They are read at each listing of t's threads
// (Threads), at least as often as they fill while they hold records or
// lately held samples (DrainInterval), and, where t's options ask, watched:
// a ring half full wakes the sampler, whose tick then lists the threads
// (they changed), so that empty rings need not hold the drains of a
// command that starts no process to their fill time. Nil p does nothing.
func (t *Target) useDescendantRings(p *processRings) {
	if p == nil {
		return
	}
	if t.kernel == nil {
		p.close()
		return
	}
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	p.vdso = &lockedReader{t: t}
	if p.stack > 0 {
		// It reads nothing but the copy: the child has run on since.
		w, err := newWalker(t.opts, nil)
		if err != nil {
			p.close()
			return
		}
		p.walker, p.fpOnly = w, !t.plan().tables
	}
	t.kernel.kids, t.kernel.exact = p, new(exactChains)
	if t.kernel.waiting != nil {
		p.watch(t.kernel.waiting)
	}
}

// useProcessRings makes p, opened for t's process at its exec, t's source of
// kernel samples, woken at half full where t's options ask (it closes p if
// t takes no kernel samples). Nil p does nothing.
func (t *Target) useProcessRings(p *processRings) {
	if p == nil {
		return
	}
	if t.kernel == nil {
		p.close()
		return
	}
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	p.vdso = &lockedReader{t: t}
	t.kernel.proc, t.kernel.exact = p, new(exactChains)
	if t.kernel.waiting != nil {
		t.kernel.procWatched = p.watch(t.kernel.waiting)
	}
}

// listSampledThreads adds, as departed threads, those the last collect found
// samples of that t knows neither alive nor departed: threads that started
// and ended since the last listing. Their CPU time is as many periods as
// they have samples, as is that of a departed thread whose CPU time was
// never read. The caller holds stateMu.
func (t *Target) listSampledThreads(p *processRings) {
	k := t.kernel
	k.procThreads = p.threadsWithSamples(k.procThreads)
	for _, ts := range k.procThreads {
		k.noteRingLost(ts.tid, ts.lost)
		if th, ok := t.threads[ts.tid]; ok {
			if ts.name != "" {
				// As new as the rings: no wait for Info's next read.
				th.name = ts.name
				t.names.read(th, time.Now())
			}
			continue
		}
		proc := 0
		if ts.pid != t.pid {
			proc = ts.pid // a descendant's thread
		}
		if th, ok := t.departed[ts.tid]; ok {
			th.proc = proc
			t.nameSampled(th, ts.name)
			if th.lastCPU == 0 {
				// Listed, but gone before its CPU time was read.
				th.lastCPU = time.Duration(ts.n+ts.lost) * t.opts.Kernel.Period
			}
			continue
		}
		if len(t.departed) >= maxDeparted {
			return
		}
		th := &thread{tid: ts.tid, proc: proc, files: threadFiles{schedstat: -1, stat: -1}, gen: t.tasks.gen}
		th.lastCPU = time.Duration(ts.n+ts.lost) * t.opts.Kernel.Period
		t.nameSampled(th, ts.name)
		t.departed[ts.tid] = th
	}
}

// listDescendantThreads lists, as departed threads of their process, the
// threads of t's descendants that the last collect of descendant rings p
// found samples or an exit of. Each one's CPU time is the periods of all
// its samples so far or, once it exited, the CPU time the kernel counted,
// if more: the part period a short-lived child ends with, which no sample
// accounts for, is then counted too. The kernel's count is taken only up
// to a period more than the samples for each CPU's event that counted
// any (each samples every period it counts, and ends within one): with
// another profiler's inherited events on the same tasks (perf record
// under record), the counts at exit are not the thread's, off by up to
// a third of its CPU time either way and 0.6 s on a thread that used
// 3 ms, where its samples still were its CPU time (schedstat). The caller
// holds stateMu.
func (t *Target) listDescendantThreads(p *processRings) {
	k := t.kernel
	k.procThreads = p.threadsWithSamples(k.procThreads)
	for _, ts := range k.procThreads {
		if ts.pid == t.pid {
			// Samples dropped in the context of one of the
			// command's threads, whose own ring reports them.
			k.noteRingLost(ts.tid, ts.lost)
			continue
		}
		th, ok := t.departed[ts.tid]
		if !ok || th.proc != ts.pid {
			// New, or an id another process took.
			if !ok && len(t.departed) >= maxDeparted {
				continue
			}
			th = &thread{tid: ts.tid, proc: ts.pid, files: threadFiles{schedstat: -1, stat: -1}}
			t.departed[ts.tid] = th
		}
		th.gen, th.tracked, th.ended = t.tasks.gen, true, th.ended || ts.exited
		t.nameSampled(th, ts.name)
		th.sampled += time.Duration(ts.n+ts.lost) * t.opts.Kernel.Period
		if ts.exitCPU > 0 {
			most := th.sampled + time.Duration(ts.exitEvents)*t.opts.Kernel.Period
			th.exitCPU = max(th.exitCPU, min(th.exitCPU+ts.exitCPU, most))
		}
		th.lastCPU = max(th.sampled, th.exitCPU)
		k.noteRingLost(ts.tid, ts.lost)
	}
}

// maxDeparted bounds the threads listed as departed from process rings'
// samples (each costs the sampler a thread's state): a few thousand
// short-lived children between two listings.
const maxDeparted = 1 << 14

// SamplesDescendants reports whether t's samples include those of the
// processes its command started (target.DescendantSampler): with process
// or descendant rings, which they inherit.
func (t *Target) SamplesDescendants() bool {
	return t.processRings() != nil || t.descendantRings() != nil
}

// Keep moves the samples in the process rings into the target's own memory
// (target.SampleKeeper) and reports whether the sampler may leave the
// threads unlisted this tick: not once the process has exited or kept
// keptMost bytes, nor without process rings.
// It is called from the sampler's goroutine only.
func (t *Target) Keep() bool {
	p := t.processRings()
	if p == nil {
		return false
	}
	t.stateMu.Lock()
	gone := t.exited || t.closed
	t.stateMu.Unlock()
	// The command is macprof's child: waitid tells its exit (all its
	// threads gone) without reading /proc; a child no longer there
	// (reaped already) has exited too.
	return !gone && !exitedChild(t.pid) && p.keep()
}

// departAll makes every listed thread of an exited target departed, so
// that the sampler drains what they left at the one listing Threads still
// gives (their CPU time is what was last read, or as many periods as they
// have samples if it never was). The caller holds stateMu.
func (t *Target) departAll() {
	for tid, th := range t.threads {
		delete(t.threads, tid)
		th.files.close()
		th.gen = t.tasks.gen
		t.departed[tid] = th
	}
}
