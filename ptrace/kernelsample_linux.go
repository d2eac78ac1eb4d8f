//go:build linux && (amd64 || arm64)

package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// Kernel samples (continuous mode with Options.Kernel.Period): each
// thread gets a perf_event of its own and a ring the kernel writes its
// samples into (perfsample_linux.go), and the sampler drains the rings
// without stopping the threads. A thread's first capture opens its ring
// and stops it once; a thread whose ring cannot be opened is captured by
// stopping it (stopcapture_linux.go).

// kernelSampler is the state of kernel samples, used under hotMu.
type kernelSampler struct {
	// execs is the execs of the process its rings showed (execGens.seen),
	// where a new ring starts counting.
	execs atomic.Int64
	// walker reads nothing but the sample's stack copy: the thread has run
	// on since the sample.
	walker *unwind.Walker
	// Buffers for one sample: with a stack copy, read in parts; with a
	// callchain, whole (rec).
	regBuf [8]uint64
	head   [64]byte
	dyn    [8]byte
	sample perfSample
	rec    []byte
	chain  perfChainSample
	// With a hybrid sample (hybrid_linux.go): the record where it wraps
	// around its ring's end, the sample, its callchain's user addresses.
	hrec   []byte
	hybrid perfHybridSample
	hchain []uint64
	// probe holds the walks of copyReach's trials.
	probe []uint64
	// chainRecord is the largest sample with a callchain drained yet (0:
	// none), by which DrainInterval judges what a small ring holds.
	chainRecord int
	// openErr is the first error opening a ring (that thread is stopped
	// instead), small the first ring made small for want of locked
	// memory.
	openErr  error
	small    error
	openRing func(tid int, spec ringSpec) (*perfRing, bool, error) // openPerfRing; tests replace it
	// ringIdle is how long a ring stays open without a sample
	// (ringIdleTimeout; tests shorten it), ringBusy how close two captures
	// of a thread without a ring must come to give it one (half of it).
	ringIdle, ringBusy time.Duration
	// rings counts the rings open, which maxRings bounds (tests lower
	// it); full is the warning given when a thread was stopped for want
	// of one.
	rings    atomic.Int32
	maxRings int32
	// stackRings counts the open rings that copy stacks rather than take
	// callchains: while there is one, drains come as often as it needs.
	stackRings atomic.Int32
	// ringBytes sums the data areas of the open rings.
	ringBytes atomic.Int64
	full      error
	// waiting, when set, is called when a ring is half full
	// (Options.Kernel.SamplesWaiting; watchRing).
	waiting func()
	// ringsMayGrow: rings may grow their stack copies (growRing) only
	// where locked memory is not budgeted (CAP_IPC_LOCK): under a
	// user's budget, a few grown rings would leave none for new threads.
	ringsMayGrow bool
	// copyFirstWalk: a thread's first ring copies what its first
	// capture's walk read (tests that follow growRing turn it off).
	copyFirstWalk bool
	// proc, when set, samples the whole process (process rings): no
	// thread has a ring of its own. procWatched: each of its rings
	// wakes the sampler when half full.
	proc        *processRings
	procWatched bool
	// kids, when set, samples the target's descendants (descendant
	// rings); its threads have rings of their own.
	kids        *processRings
	procThreads []threadSamples // listSampledThreads's buffer
	exact       *exactChains    // process rings' chains known exact
	// lost holds, per thread, the samples its ring's PERF_RECORD_LOST
	// records said were dropped, until LostSamples takes them (a thread
	// that departed is forgotten at its last drain, before).
	lost map[int]int64
	// ringLost is lost for the records of process and descendant rings,
	// which their listing reads under stateMu (not hotMu); it guards it.
	ringLost map[int]int64
	// after reads a thread's stack past its sample's copy, for the walk
	// (aftersample_linux.go).
	after afterSample
}

func newKernelSampler(opts target.Options) (*kernelSampler, error) {
	w, err := newWalker(opts, nil)
	if err != nil {
		return nil, err
	}
	return &kernelSampler{walker: w, openRing: openPerfRing, ringIdle: ringIdleTimeout, ringBusy: ringIdleTimeout / 2, maxRings: maxRings, ringsMayGrow: canLockMemory(), copyFirstWalk: true, waiting: opts.Kernel.SamplesWaiting,
		rec: make([]byte, perfChainSampleMaxBytes()), lost: map[int]int64{},
		hrec: make([]byte, perfHybridSampleMaxBytes(hybridMaxCopy)), hchain: make([]uint64, 0, perfMaxStack()), probe: make([]uint64, 0, max(opts.MaxFrames, unwind.DefaultMaxFrames))}, nil
}

// threadKernel is a thread's kernel sampling state.
type threadKernel struct {
	ring      *perfRing // its ring, once opened
	noRing    bool      // the ring could not be opened: capture by stopping it
	ringStack int       // the stack bytes its ring's samples copy
	ringFull  bool      // ringStack cannot grow (at its limit, or refused)
	ranOff    bool      // a walk of a sample in its ring ran past the stack copy
	// need is the most stack above SP a walk of a sample in its ring
	// read after the sample (0: none, or not known): what its copy
	// grows to at once (growRing).
	need int
	// The samples its ring had since windowStart (when it was opened, or
	// the last ringIdle began).
	windowStart   time.Time
	windowSamples int
	// The counts its open ring is in: all rings, rings with stack copies,
	// their bytes.
	rings, stackRings *atomic.Int32
	ringBytes         *atomic.Int64
	// Callchains (callchain_linux.go): chain, its last ring took them;
	// needStack, one of them met a frame without a frame record; exact,
	// the walks of its stack copies exact by frame records in a row,
	// exactNeed how many move it to callchains.
	chain            bool
	needStack        bool
	exact, exactNeed int
	// Hybrid samples (hybrid_linux.go): slim, the walks of its stack
	// copies in a row a hybrid sample could have served, the most stack
	// they needed slimNeed (exactNeed tells how many move it to hybrid
	// samples too); slimWait, the samples to pass before the next trial,
	// slimBackoff the last such wait.
	slim, slimNeed        int
	slimWait, slimBackoff int
	// For its ring: the samples and bytes of the drain under way, when
	// the last one ended, and how long the ring took to fill at the rate
	// seen then (0: not known yet), which DrainInterval heeds.
	drained, drainedBytes int
	lastDrain             time.Time
	fill                  time.Duration
	// probing: its ring is its first with stack copies, small
	// (probeRingSpec); ringSamples counts the samples drained from its
	// ring since it opened.
	probing     bool
	ringSamples int
	// light: its ring was closed as it had too few samples to need one;
	// it is stopped for its captures until two come within ringBusy.
	light    bool
	lastStop time.Time // its last capture while light
}

// closeRing closes the thread's ring, if it has one.
func (tk *threadKernel) closeRing() {
	if tk.ring != nil {
		tk.ring.close()
		if !tk.ring.chain {
			tk.stackRings.Add(-1)
		}
		tk.ringBytes.Add(-int64(len(tk.ring.data)))
		tk.ring = nil
		tk.rings.Add(-1)
	}
}

// setRing makes r the thread's ring, closing the one it had, and keeps the
// counts of rings.
func (tk *threadKernel) setRing(r *perfRing, k *kernelSampler) {
	if tk.ring != nil {
		r.name = tk.ring.name
		tk.closeRing()
	}
	tk.ring, tk.rings, tk.stackRings, tk.ringBytes, tk.chain, tk.ranOff = r, &k.rings, &k.stackRings, &k.ringBytes, r.chain, false
	r.execBase = int(k.execs.Load())
	tk.drained, tk.drainedBytes, tk.lastDrain, tk.fill = 0, 0, time.Time{}, 0
	tk.probing, tk.ringSamples = false, 0
	k.rings.Add(1)
	k.ringBytes.Add(int64(len(r.data)))
	if !r.chain {
		k.stackRings.Add(1)
	}
	if k.waiting != nil && r.chain {
		// Without the watch, the ring is drained as often as what
		// it holds needs (DrainInterval).
		if stop, err := watchRing(r, k.waiting); err == nil {
			r.stopWatch = stop
		}
	}
}

// captureKernel captures a thread from its newest kernel sample, opening
// its ring first if it has none (and stopping it that once).
func (t *Target) captureKernel(th *thread, c *target.Capture) error {
	tid, k := th.tid, t.kernel
	if th.kernel.ring == nil {
		now := time.Now()
		if th.kernel.light {
			last := th.kernel.lastStop
			th.kernel.lastStop = now
			if now.Sub(last) > k.ringBusy {
				return t.stopCaptureAndWalk(th, c)
			}
		}
		if k.rings.Load() >= k.maxRings {
			// Each ring pins memory and holds a file: beyond the
			// ceiling, threads are stopped for their samples, and
			// one gets a ring that frees up only once busy.
			th.kernel.light, th.kernel.lastStop = true, now
			if k.full == nil {
				k.full = fmt.Errorf("thread %d and others stopped for their samples: at most %d threads have sample buffers at once (each %d KiB of locked memory and a file)",
					tid, k.maxRings, perfRingBytes(t.ringSpec(perfStackBytes))>>10)
			}
			return t.stopCaptureAndWalk(th, c)
		}
		// A thread whose ring was closed while it idled gets back the
		// callchains it had, or the stack copy it had grown to, if the
		// budget allows.
		stack := max(th.kernel.ringStack, perfStackBytes)
		if th.kernel.chain || t.plan().chainsFirst {
			stack = 0
		}
		// The ring has no sample yet: this once, the thread is stopped,
		// before the ring opens, so that a thread's first ring (--unwind
		// auto) whose capture lies all in code that keeps frame pointers
		// (Go) starts with callchains rather than after chainAfter stack
		// copies; a callchain that meets other code sends its ring back
		// to stack copies, as any.
		capErr := t.stopCaptureAndWalk(th, c)
		if capErr == nil && th.kernel.ringStack == 0 && !th.kernel.chain && t.plan().switchRings && t.framePointersOnly(c.PCs) {
			stack = 0
		}
		if top, sp := c.Walk.Top, c.Regs.SP; capErr == nil && stack != 0 && th.kernel.ringStack == 0 && top > sp && int(min(top-sp, 1<<30)) > stack && k.ringsMayGrow && k.copyFirstWalk {
			// A copy that holds what this walk read, at once, rather
			// than after a ring's worth of samples walked past it and
			// a second ring (growRing).
			stack = min(grownCopy(stack, int(min(top-sp, 1<<30))), t.maxStackBytes())
		}
		// A thread's first ring with stack copies, which --unwind auto
		// moves to callchains or hybrid samples after chainAfter walks,
		// is small until then (probeRingSpec).
		probe := stack != 0 && th.kernel.ringStack == 0 && t.plan().switchRings && k.ringsMayGrow
		spec := func(stack int) ringSpec {
			if probe {
				return t.probeRingSpec(stack)
			}
			return t.ringSpec(stack)
		}
		r, small, err := k.openRing(tid, spec(stack))
		if err != nil && stack > perfStackBytes {
			stack = perfStackBytes
			r, small, err = k.openRing(tid, spec(stack))
		}
		if small && k.small == nil {
			k.small = fmt.Errorf("thread %d: sample buffer reduced to %d KiB for want of locked memory (ulimit -l, or perf_event_mlock_kb): CPU time whose samples did not fit is counted as [lost: buffer full]", tid, perfMinRingBytes>>10)
		}
		if errors.Is(err, unix.ESRCH) {
			// The thread ended after its capture: no refusal, and
			// nothing to stop it for.
			return capErr
		}
		if err != nil {
			// Not allowed or out of resources (a user's locked-memory
			// budget for rings is small): this thread is stopped for
			// its samples instead.
			th.kernel.noRing = true
			if k.openErr == nil {
				k.openErr = err
			}
			return capErr
		}
		th.kernel.setRing(r, k)
		t.nameRing(th, r)
		if stack != 0 {
			th.kernel.ringStack = stack
			th.kernel.probing = probe
		}
		th.kernel.windowStart, th.kernel.windowSamples, th.kernel.light = time.Now(), 0, false
		return capErr
	}
	return t.captureSampled(th, c)
}

// captureSampled fills c from the newest kernel sample of th and walks its
// stack copy. Past the copy's end the thread has run on since the sample:
// the walk reads on from the process, each frame checked and marked
// (fillFromSample, unwind.Stack.After).
func (t *Target) captureSampled(th *thread, c *target.Capture) error {
	r := th.kernel.ring
	at, size, ok := r.newest()
	if !ok {
		// Common in steady state (the kernel's period and the tick are
		// out of phase): the bare sentinel, which allocates nothing.
		r.consume()
		return ErrNoSample
	}
	defer r.consume()
	switch err := t.fillFromSample(th, at, size, c, false); {
	case errors.Is(err, errNoUserRegs):
		return ErrNoSample
	case err != nil:
		return threadErr(th.tid, err)
	}
	return nil
}

// errNoUserRegs reports a kernel sample without user registers (taken in a
// kernel thread): nothing to walk.
var errNoUserRegs = errors.New("sample without user registers")

// fillFromSample fills c from the sample record of size bytes at ring
// position at: its callchain, or the walk of its stack copy. In place, a
// stack copy that does not wrap around the ring's end is walked where the
// kernel wrote it, not copied into c.Stack (left empty): the copy was a
// tenth of a drain's time with 8-32 KiB copies. The ring is not written
// there until it is consumed, after the walk.
func (t *Target) fillFromSample(th *thread, at, size uint64, c *target.Capture, inPlace bool) error {
	r, k := th.kernel.ring, t.kernel
	if r.chain {
		return t.fillFromChain(th, at, size, c)
	}
	if r.hybrid {
		return t.fillFromHybrid(th, at, size, c, inPlace)
	}
	head := k.head[:min(int(size), perfSampleHeadLen(perfRegCount))]
	r.readAt(head, at)
	s := &k.sample
	err := parsePerfSampleHead(head, int(size), perfRegCount, k.regBuf[:], func(off int) uint64 {
		r.readAt(k.dyn[:], at+uint64(off))
		return binary.LittleEndian.Uint64(k.dyn[:])
	}, s)
	if err != nil {
		return err
	}
	if len(s.regs) != perfRegCount {
		return errNoUserRegs
	}
	regs := perfRegs(s.regs)
	c.Thread, c.Regs, c.Stopped, c.Err = target.ThreadID(th.tid), regs, 0, nil
	c.Time = r.clock.at(s.time)
	data := r.slice(at+uint64(s.stackOff), min(s.stackLen, cap(c.Stack)))
	if c.Stack = c.Stack[:0]; data == nil || !inPlace {
		c.Stack = c.Stack[:min(s.stackLen, cap(c.Stack))]
		r.readAt(c.Stack, at+uint64(s.stackOff))
		data = c.Stack
	}
	c.StackBase = regs.SP
	lo, hi, ok := t.stackBounds(regs.SP)
	if !ok {
		lo, hi = regs.SP, regs.SP+uint64(len(data))
	}
	st := unwind.Stack{Base: c.StackBase, Data: data, Lo: lo, Hi: hi, After: k.after.forWalk(t.pid, lo, hi)}
	c.PCs, c.Walk = t.walk(k.walker, regs, &st, c.PCs[:0], false)
	if top := k.after.top; top > regs.SP && c.Walk.LeftCopy() {
		th.kernel.need = max(th.kernel.need, int(min(top-regs.SP, 1<<30)))
	}
	t.noteWalk(th, c)
	t.noteCopyReach(th, c, &st)
	return nil
}

// KernelSampleError returns why kernel samples could not be used for some
// thread (which was then stopped for its samples), or nil.
func (t *Target) KernelSampleError() error {
	if t.kernel == nil {
		return nil
	}
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	return t.kernel.openErr
}

// KernelSampleWarning returns why some thread's kernel samples are kept in
// a smaller buffer than the drain interval needs (samples that did not
// fit were counted as lost), or why a thread was stopped for
// its samples as the ceiling of buffers was reached, or nil.
func (t *Target) KernelSampleWarning() error {
	if t.kernel == nil {
		return nil
	}
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	return errors.Join(t.kernel.small, t.kernel.full)
}

// KernelSampled reports whether kernel samples are on, and whether every
// thread's could be opened so far (target.SampleDrainer).
func (t *Target) KernelSampled() (on, everyThread bool) {
	if t.kernel == nil {
		return false, true
	}
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	return true, t.kernel.openErr == nil
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
		return 0, threadErr(tid, target.ErrNoThread)
	case t.kernel != nil && t.kernel.proc != nil:
		return t.drainProcess(t.kernel.proc, tid, caps), nil
	case t.kernel != nil && t.kernel.kids != nil && th.proc != 0:
		return t.drainProcess(t.kernel.kids, tid, caps), nil
	case t.kernel == nil || th.kernel.ring == nil:
		return 0, target.ErrNotKernelSampled
	}
	r, k := th.kernel.ring, t.kernel
	r.begin()
	n := 0
	var gen execImages // the images of the program after genAt execs
	genAt := -1
	for n < len(caps) {
		at, size, ok := r.next()
		if !ok {
			break
		}
		// A sample that cannot be read or walked is skipped: the
		// sampler counts its CPU time as lost (no sample).
		th.kernel.drainedBytes += int(size)
		if r.chain {
			k.chainRecord = max(k.chainRecord, int(size))
		}
		// Walked and named with the images of the program that took
		// it: its process may have exec'd since, or before the images
		// were read last.
		if at := r.execBase + r.execs; at != genAt {
			gen, genAt = t.execImagesOf(at), at
		}
		t.tables.sample = gen.res
		t.tables.sampleNow = t.currentProgram(genAt)
		err := t.fillFromSample(th, at, size, caps[n], true)
		if t.tables.sample != gen.res {
			// The walk re-read the memory map: the program's images
			// grew (rereadForMiss).
			gen = t.execImagesOf(genAt)
		}
		t.tables.sample = nil
		if err == nil {
			th.kernel.ranOff = th.kernel.ranOff || caps[n].Walk.LeftCopy()
			caps[n].Images, caps[n].Executable = gen.set, gen.exe
			caps[n].ThreadName = r.name
			n++
		}
	}
	r.consume()
	if n < len(caps) {
		r.drainedNames()
	}
	if lost := r.takeLost(); lost > 0 {
		k.lost[tid] += lost
	}
	now := time.Now()
	th.kernel.windowSamples += n
	th.kernel.drained += n
	th.kernel.ringSamples += n
	if n < len(caps) {
		th.kernel.noteDrain(now)
	}
	switch {
	case n == len(caps):
		// More to drain.
	case departed:
		t.stateMu.Lock()
		t.forgetDeparted(tid)
		t.stateMu.Unlock()
	case th.kernel.needStack || th.kernel.exact >= max(th.kernel.exactNeed, chainAfter) || th.kernel.slim >= max(th.kernel.exactNeed, chainAfter):
		t.switchRing(th)
	case th.kernel.ranOff && !r.chain && !th.kernel.ringFull && k.ringsMayGrow && k.small == nil && k.openErr == nil:
		t.growRing(th)
	case th.kernel.probing && th.kernel.ringSamples >= probeSamples:
		t.endProbe(th)
	case r.chain && r.stopWatch != nil && th.kernel.fill > 0 && th.kernel.fill < 2*t.drainInterval(maxChainPeriods) && k.ringsMayGrow:
		t.growChainRing(th)
	case now.Sub(th.kernel.windowStart) > k.ringIdle && th.kernel.windowSamples == 0:
		// Idle: its locked memory and file go back, and its captures
		// stop it until it is busy again.
		th.kernel.closeRing()
		th.kernel.light, th.kernel.lastStop = true, now
	case now.Sub(th.kernel.windowStart) > k.ringIdle:
		th.kernel.windowStart, th.kernel.windowSamples = now, 0
	}
	return n, nil
}

// LostSamples returns how many samples of thread id the kernel reported
// dropped, its ring being full, in what DrainSamples read since the last
// call (target.SampleLossReporter). Process rings tell no thread's loss.
func (t *Target) LostSamples(id target.ThreadID) int64 {
	if t.kernel == nil {
		return 0
	}
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	n, ok := t.kernel.lost[int(id)]
	if ok {
		delete(t.kernel.lost, int(id))
	}
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	if m, ok := t.kernel.ringLost[int(id)]; ok {
		n += m
		delete(t.kernel.ringLost, int(id))
	}
	return n
}

// noteRingLost adds n samples the kernel dropped to thread tid's, from a
// process or descendant ring. The caller holds stateMu.
func (k *kernelSampler) noteRingLost(tid, n int) {
	if n <= 0 {
		return
	}
	if k.ringLost == nil {
		k.ringLost = make(map[int]int64)
	}
	k.ringLost[tid] += int64(n)
}

// A thread keeps its ring while it has a sample in every ringIdleTimeout
// (used a period of CPU time), so that rings follow the threads that run.
// The test is a sample rather than a rate: at 19 Hz a thread using 4% of a
// CPU is sampled under once a second, and stopping it for each capture
// instead costs both sides a context switch per sample, which is what a
// ring is there to save. One without a ring (closed, or refused at the
// ceiling) gets one when two of its captures come within ringIdleTimeout/2,
// twice the rate that keeps a ring, so that a thread near it does not take
// rings in turn.
const ringIdleTimeout = 5 * time.Second

// maxRings bounds the rings of one target: each costs its thread a file
// and perfRingBytes of pinned memory (more once grown), so that many busy
// threads cannot pin memory without bound; beyond it threads are stopped
// for their samples.
const maxRings = 256

// canLockMemory reports whether macprof has CAP_IPC_LOCK, which frees the
// rings it maps from the locked-memory budget (perf_event_mlock_kb and
// RLIMIT_MEMLOCK).
func canLockMemory() bool { return haveCapability(unix.CAP_IPC_LOCK) }

// growChainRing reopens the kernel sample event of th, whose ring with
// callchains would fill within twice the longest drain interval at its last
// drain's rate, with a ring four times as large, up to what that interval's
// largest samples need (2 MiB at 999 Hz and a second), while the target's
// rings stay within bigRingBudget. A thread's first ring is small when the
// sampler is woken at half full (chainDrainPeriods), so that only the
// threads that keep a CPU busy take memory, and the kernel's clearing of
// it, in the command's first milliseconds; the new event starts its first
// period afresh, counted as lost as in growRing.
func (t *Target) growChainRing(th *thread) {
	k, r := t.kernel, th.kernel.ring
	most := perfRingBytes(ringSpec{period: t.opts.Kernel.Period, interval: t.drainInterval(maxChainPeriods)})
	size := min(4*len(r.data), most)
	if size <= len(r.data) || k.ringBytes.Load()+int64(size-len(r.data)) > bigRingBudget {
		return
	}
	holds := size/perfSampleMaxBytes(0) - perfRingSlack
	t.reopenRing(th, ringSpec{period: t.opts.Kernel.Period, interval: t.drainInterval(holds), bytes: size})
}

// reopenRing opens a new event and ring for th with spec in place of the
// ones it has, and reports whether it did: a ring the kernel refuses, or
// makes smaller for want of locked memory, is closed and th keeps its own.
func (t *Target) reopenRing(th *thread, spec ringSpec) bool {
	r, small, err := t.kernel.openRing(th.tid, spec)
	if err != nil || small {
		if r != nil {
			r.close()
		}
		return false
	}
	th.kernel.setRing(r, t.kernel)
	return true
}

// growRing reopens the kernel sample event of th, whose samples' walks ran
// past their stack copies, with a larger copy (and a ring to match), up to
// maxStackBytes, once its ring is drained: twice the copy, or at once the
// power of two that holds what the walks read after the sample (an 8 KiB
// copy of a 40 KiB stack becomes 64 KiB, not 16 then 32 then 64, a
// drain's samples read after the sample at each step). The new event starts its first period afresh: the
// sampler counts the CPU time of that part period as lost. If
// the kernel refuses the larger ring, the thread keeps the one it has.
func (t *Target) growRing(th *thread) {
	most := t.maxStackBytes()
	size := min(grownCopy(th.kernel.ringStack, th.kernel.need), most)
	th.kernel.need = 0
	if size <= th.kernel.ringStack || !t.reopenRing(th, t.ringSpec(size)) {
		th.kernel.ringFull = true
		return
	}
	th.kernel.ringStack, th.kernel.ranOff = size, false
	th.kernel.ringFull = size >= most
}

// grownCopy returns the copy that replaces one of have bytes whose walks
// needed need bytes of stack above SP (0: not known): twice have, or the
// smallest power of two holding need, whichever is larger.
func grownCopy(have, need int) int {
	size := 2 * have
	for size > 0 && size < need {
		size *= 2
	}
	return size
}
