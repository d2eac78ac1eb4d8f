//go:build linux && (amd64 || arm64)

package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/procstat"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// chainRecord builds a callchain sample record of thread tid: the chain's
// entries, then the registers.
func chainRecord(tid uint32, chain []uint64, regs []uint64) []byte {
	le := binary.LittleEndian
	n := 8 + 8 + 8 + 8 + 8*len(chain) + 8 + 8*len(regs)
	rec := make([]byte, n)
	le.PutUint32(rec[0:], unix.PERF_RECORD_SAMPLE)
	le.PutUint16(rec[6:], uint16(n))
	le.PutUint32(rec[8:], tid)
	le.PutUint32(rec[12:], tid)
	le.PutUint64(rec[16:], sampleTime)
	le.PutUint64(rec[24:], uint64(len(chain)))
	off := 32
	for _, v := range chain {
		le.PutUint64(rec[off:], v)
		off += 8
	}
	abi := uint64(unix.PERF_SAMPLE_REGS_ABI_64)
	if len(regs) == 0 {
		abi = unix.PERF_SAMPLE_REGS_ABI_NONE
	}
	le.PutUint64(rec[off:], abi)
	off += 8
	for _, v := range regs {
		le.PutUint64(rec[off:], v)
		off += 8
	}
	return rec
}

func TestParsePerfChainSample(t *testing.T) {
	user := uint64(1<<64 + unix.PERF_CONTEXT_USER)
	if user < perfContextMax {
		t.Fatalf("PERF_CONTEXT_USER = %#x, below PERF_CONTEXT_MAX %#x", user, perfContextMax)
	}
	rec := chainRecord(42, []uint64{user, 0x401000, 0x402000}, []uint64{1, 2, 3})
	var s perfChainSample
	regs := make([]uint64, 0, 8)
	if err := parsePerfChainSample(rec, 3, regs, &s); err != nil {
		t.Fatal(err)
	}
	if s.tid != 42 || s.time != sampleTime || s.nchain != 3 || !slices.Equal(s.regs, []uint64{1, 2, 3}) {
		t.Fatalf("parsed %+v", s)
	}
	if v := binary.LittleEndian.Uint64(rec[s.chainOff+8:]); v != 0x401000 {
		t.Errorf("second entry %#x", v)
	}
	// A kernel thread's sample has no user registers.
	if err := parsePerfChainSample(chainRecord(1, []uint64{user}, nil), 3, regs, &s); err != nil || len(s.regs) != 0 {
		t.Errorf("no registers: %v, %v", err, s.regs)
	}
	// Lengths that do not fit the record are errors, never reads past it.
	long := chainRecord(42, []uint64{user, 1}, []uint64{1, 2, 3})
	binary.LittleEndian.PutUint64(long[24:], 1<<40)
	short := chainRecord(42, []uint64{user, 1}, []uint64{1, 2, 3})
	for name, r := range map[string][]byte{
		"chain too long":  long,
		"no registers":    short[:len(short)-16],
		"size mismatch":   append(slices.Clone(short), make([]byte, 8)...),
		"shorter than 32": short[:24],
	} {
		if name != "size mismatch" && name != "shorter than 24" {
			binary.LittleEndian.PutUint16(r[6:], uint16(len(r)))
		}
		if err := parsePerfChainSample(r, 3, regs, &s); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func FuzzParsePerfChainSample(f *testing.F) {
	f.Add(chainRecord(7, []uint64{uint64(1<<64 + unix.PERF_CONTEXT_USER), 0x401000, 0x402000}, []uint64{1, 2, 3}))
	f.Add(chainRecord(7, nil, nil))
	f.Fuzz(func(t *testing.T, rec []byte) {
		var s perfChainSample
		regs := make([]uint64, 0, 8)
		if parsePerfChainSample(rec, 3, regs, &s) != nil {
			return
		}
		if s.chainOff+8*s.nchain > len(rec) || len(s.regs) > 3 {
			t.Fatalf("parsed %+v out of a %d-byte record", s, len(rec))
		}
	})
}

// TestKernelCallchainWithUnwindFP: with --unwind fp, rings take the
// kernel's callchain and copy no stack; a capture from it names the same
// callers as a stop's walk, allocates nothing, and the rings are drained
// ten times less often.
func TestKernelCallchainWithUnwindFP(t *testing.T) {
	const period = 10 * time.Millisecond
	opts := target.Options{Continuous: true, Unwind: unwind.MethodFP, Kernel: target.KernelSampling{Period: period}}
	_, tg := startDeep(t, opts, "1", "12")
	tids, err := tg.Threads(nil)
	if err != nil {
		t.Fatal(err)
	}
	tid := int(worker(t, tg, tids)) // the spinning thread
	if d := tg.DrainInterval(); d != 100*time.Millisecond {
		t.Errorf("drain interval %v before any ring, want 100 ms (callchain rings)", d)
	}
	k := target.NewCapture(512, 64<<10)
	kernelCapture(t, tg, tid, k)
	if r := tg.threads[tid].kernel.ring; r == nil || !r.chain {
		t.Fatal("the ring copies stacks, want callchains")
	}
	if len(k.Stack) != 0 || k.Stopped != 0 {
		t.Errorf("a callchain capture has %d bytes of stack, stopped %v", len(k.Stack), k.Stopped)
	}
	s := target.NewCapture(512, 64<<10)
	if err := stoppedCapture(tg, tid, s); err != nil {
		t.Fatal(err)
	}
	if len(k.PCs) < 14 || !slices.Equal(k.PCs[1:], s.PCs[1:]) {
		t.Fatalf("kernel callchain %x\nstopped walk     %x\nwant the same callers, at least 14 frames", k.PCs, s.PCs)
	}
	if k.Walk.Stop != s.Walk.Stop || k.Walk.Hash != unwind.HashPCs(k.PCs) {
		t.Errorf("callchain ended %v (hash %x), stopped walk %v", k.Walk.Stop, k.Walk.Hash, s.Walk.Stop)
	}
	allocs := testing.AllocsPerRun(10, func() {
		time.Sleep(period + period/2)
		if err := tg.Capture(target.ThreadID(tid), k); err != nil && !errors.Is(err, ErrNoSample) {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("capture from a callchain: %.1f allocations, want 0", allocs)
	}
	// Drains note the largest sample, by which DrainInterval judges what
	// a small ring holds.
	waitSamples(t, tg, target.ThreadID(tid), drainCaps(8), 1)
	if got := tg.kernel.chainRecord; got < 8*len(k.PCs) || got > perfSampleMaxBytes(0) {
		t.Errorf("largest callchain sample %d bytes, want from %d (%d frames) to %d", got, 8*len(k.PCs), len(k.PCs), perfSampleMaxBytes(0))
	}
}

// TestCallchainRingFollowsTheTables: with --unwind auto, a thread whose
// first capture lies all in code known to keep frame pointers (Go) starts
// with callchains; one sent back to stack copies moves to callchains again
// after chainAfter walks exact by frame records; a callchain that meets a
// frame without a frame record (gcc's frameless leaf) is cut there, marked,
// and moves the thread back to stack copies, whose walks keep the leaf's
// caller.
func TestCallchainRingFollowsTheTables(t *testing.T) {
	t.Run("go", func(t *testing.T) {
		p := testprog.Start(t, testprog.BuildGo(t, "godeep"), "1", "8")
		const period = 2 * time.Millisecond
		tg, err := Attach(p.PID, target.Options{Continuous: true, Kernel: target.KernelSampling{Period: period}})
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		if _, err := tg.Images(); err != nil {
			t.Fatal(err)
		}
		tid := spinningThread(t, tg)
		c := target.NewCapture(512, 64<<10)
		if err := captureStop(t, tg, tid, c); err != nil {
			t.Fatal(err)
		}
		th := tg.threads[int(tid)]
		if th.kernel.ring == nil || !th.kernel.ring.chain {
			t.Fatalf("a Go thread's first ring takes stack copies (first capture %x)", c.PCs)
		}
		// Sent back to stack copies (as a callchain through a frame
		// without a record would), it returns to callchains after
		// chainAfter exact walks.
		tg.hotMu.Lock()
		th.kernel.needStack = true
		switched := tg.switchRing(th)
		tg.hotMu.Unlock()
		if !switched || th.kernel.ring.chain {
			t.Fatal("the ring did not go back to stack copies")
		}
		caps := drainCaps(8)
		var stackWalk []uint64
		if !testprog.PollEvery(20*time.Second, 20*time.Millisecond, func() bool {
			stacks := !th.kernel.ring.chain // the ring switches after its last sample is drained
			n := drainRing(t, tg, tid, caps)
			for _, c := range caps[:n] {
				if stacks && c.Walk.Stop == unwind.StopEnd {
					stackWalk = slices.Clone(c.PCs) // a whole walk of a stack copy
				}
			}
			return th.kernel.ring.chain
		}) {
			t.Fatalf("no callchains after 20 s (%d exact walks in a row)", th.kernel.exact)
		}
		if th.kernel.exactNeed != 2*chainAfter {
			t.Errorf("exact walks needed next time: %d, want %d", th.kernel.exactNeed, 2*chainAfter)
		}
		if d := tg.DrainInterval(); d != 100*time.Millisecond {
			t.Errorf("drain interval %v with callchains only, want 100 ms", d)
		}
		if !testprog.PollEvery(10*time.Second, 20*time.Millisecond, func() bool {
			n, err := tg.DrainSamples(tid, caps)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				return false
			}
			got := caps[n-1]
			var last time.Time
			checkSampleTime(t, tg, got, &last)
			if got.Walk.Stop != unwind.StopEnd || len(got.Stack) != 0 || len(got.PCs) != len(stackWalk) || !slices.Equal(got.PCs[1:], stackWalk[1:]) {
				t.Fatalf("callchain %x (%v, %d stack bytes)\nstack walk %x", got.PCs, got.Walk.Stop, len(got.Stack), stackWalk)
			}
			return true
		}) {
			t.Fatal("no callchain sample in 10 s")
		}
	})
	t.Run("frameless leaf", func(t *testing.T) {
		bin, name := buildLeaf(t, "-O1", "-fno-omit-frame-pointer")
		_, tg, tid, _ := startSampled(t, bin, 2*time.Millisecond)
		caps := drainCaps(8)
		th := tg.threads[int(tid)]
		// Its walks never are exact (spin keeps no frame record; the
		// C library's start code none either): it keeps stack copies.
		walked := waitSamples(t, tg, tid, caps, 3*chainAfter)
		if th.kernel.ring.chain || th.kernel.exact != 0 {
			t.Fatalf("after %d samples: callchains %v, %d exact walks", walked, th.kernel.ring.chain, th.kernel.exact)
		}
		// Made to take callchains, its samples are cut at spin, and it
		// goes back to stack copies.
		tg.hotMu.Lock()
		th.kernel.exact = chainAfter
		tg.switchRing(th) // as the drain that counted them would
		tg.hotMu.Unlock()
		if !th.kernel.ring.chain {
			t.Fatal("not moved to callchains")
		}
		var cut *target.Capture
		if !testprog.PollEvery(10*time.Second, 10*time.Millisecond, func() bool {
			n, err := tg.DrainSamples(tid, caps)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range caps[:n] {
				if c.Walk.Stop == unwind.StopNoFrameRecord {
					cut = c
				}
			}
			return cut != nil
		}) {
			t.Fatal("no callchain cut at a frame without a frame record in 10 s")
		}
		if got := names(cut.PCs, name); !slices.Equal(got, []string{"spin"}) {
			t.Errorf("cut callchain %v, want [spin]", got)
		}
		drainRing(t, tg, tid, caps)
		if th.kernel.ring.chain || th.kernel.exactNeed != 2*chainAfter {
			t.Fatalf("after a cut callchain: callchains %v, %d exact walks needed; want stack copies, %d", th.kernel.ring.chain, th.kernel.exactNeed, 2*chainAfter)
		}
		if !testprog.PollEvery(10*time.Second, 10*time.Millisecond, func() bool {
			n, err := tg.DrainSamples(tid, caps)
			if err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				if got := names(caps[n-1].PCs, name); len(got) < 3 || !slices.Equal(got[:3], []string{"spin", "alpha", "main"}) {
					t.Errorf("stack copy walk %v; want spin, alpha, main, ...", got)
				}
			}
			return n > 0
		}) {
			t.Fatal("no sample with a stack copy in 10 s")
		}
	})
}

// drainRing drains tid until its ring is empty, as the sampler does (a
// ring is reopened only then), and returns how many samples the last call
// put in caps.
func drainRing(t *testing.T, tg *Target, tid target.ThreadID, caps []*target.Capture) int {
	t.Helper()
	for {
		n, err := tg.DrainSamples(tid, caps)
		if err != nil {
			t.Fatal(err)
		}
		if n < len(caps) {
			return n
		}
	}
}

// drainCaps returns n captures to drain into.
func drainCaps(n int) []*target.Capture {
	caps := make([]*target.Capture, n)
	for i := range caps {
		caps[i] = target.NewCapture(512, 64<<10)
	}
	return caps
}

// waitSamples drains tid until it has drained at least n samples, and
// returns how many.
func waitSamples(t *testing.T, tg *Target, tid target.ThreadID, caps []*target.Capture, n int) int {
	t.Helper()
	got := 0
	if !testprog.PollEvery(20*time.Second, 10*time.Millisecond, func() bool {
		k, err := tg.DrainSamples(tid, caps)
		if err != nil {
			t.Fatal(err)
		}
		got += k
		return got >= n
	}) {
		t.Fatalf("%d samples in 20 s, want %d", got, n)
	}
	return got
}

// spinningThread returns the thread of tg's that gained the most CPU time
// over 200 ms. A thread's state alone would not do: on a loaded machine a
// main thread about to sleep is still runnable ('R') for a while.
func spinningThread(t *testing.T, tg *Target) target.ThreadID {
	t.Helper()
	ticks := func(tid target.ThreadID) uint64 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", tg.pid, tid))
		if err != nil {
			return 0
		}
		s, err := procstat.Parse(b)
		if err != nil || !s.Has(procstat.FieldSTime) {
			return 0
		}
		return s.CPUTicks()
	}
	var running target.ThreadID
	testprog.WaitFor(t, 10*time.Second, func() bool {
		tids, err := tg.Threads(nil)
		if err != nil {
			t.Fatal(err)
		}
		before := make([]uint64, len(tids))
		for i, tid := range tids {
			before[i] = ticks(tid)
		}
		time.Sleep(200 * time.Millisecond)
		var most uint64
		for i, tid := range tids {
			if now := ticks(tid); now > before[i] && now-before[i] > most {
				most, running = now-before[i], tid
			}
		}
		return most > 0
	}, "a thread gaining CPU time")
	return running
}

// TestDrainIntervalFollowsTheBusyRings: a ring with stack copies that holds
// thirty periods' samples (the budget for rings of a hundred spent) has the
// drains come every thirty periods while its thread spins; once it sleeps,
// its ring would take far longer to fill, and the drains come as seldom as
// rings with callchains allow.
func TestDrainIntervalFollowsTheBusyRings(t *testing.T) {
	const period = time.Millisecond
	p, tg, tid, _ := startSpinExit(t, period, "30000", "idle")
	if !tg.kernel.ringsMayGrow {
		t.Fatal("rings cannot grow: the test needs CAP_IPC_LOCK (root)")
	}
	tg.kernel.ringBytes.Add(bigRingBudget - 600<<10 - tg.kernel.ringBytes.Load())
	if !tg.reopenRing(tg.threads[int(tid)], tg.ringSpec(perfStackBytes)) {
		t.Fatal("the spinning thread's ring could not be reopened")
	}
	r := tg.threads[int(tid)].kernel.ring
	if r == nil || r.chain {
		t.Fatal("the spinning thread has no ring with stack copies")
	}
	short, long := r.interval, tg.drainInterval(chainRingPeriods)
	if want := bigStackPeriods * period; short != want || long != 100*time.Millisecond {
		t.Fatalf("intervals %v and %v, want %v and 100 ms", short, long, want)
	}
	if n := perfRingBytes(ringSpec{period: period, interval: short, stack: perfStackBytes}); len(r.data) < n {
		t.Errorf("ring of %d bytes, want %d", len(r.data), n)
	}
	if d := tg.DrainInterval(); d != short {
		t.Errorf("before its first drain: %v, want %v", d, short)
	}
	caps := drainCaps(8)
	drainFor := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(short) {
			drainRing(t, tg, tid, caps)
		}
	}
	files := tg.threads[int(tid)].files
	cpu0, _, err := files.cpuTime(make([]byte, 512))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	drainFor(100 * time.Millisecond)
	cpu1, _, err := files.cpuTime(make([]byte, 512))
	if err != nil {
		t.Fatal(err)
	}
	// Spinning, it fills its ring in ten (thirty) periods of its CPU
	// time: on a loaded machine it gets less than a CPU, and the interval
	// stretches to match, short of the long one while it gets more than
	// two thirds of a CPU (its ring, of 60 samples, then fills half in
	// under 50 ms).
	share := float64(cpu1-cpu0) / float64(time.Since(start))
	if d := tg.DrainInterval(); d < short || d > long || d == long && share > 0.67 {
		t.Errorf("spinning (%.0f%% of a CPU): %v, want from %v to under %v", 100*share, d, short, long)
	}
	if err := p.Cmd.Process.Signal(syscall.SIGUSR1); err != nil { // the thread goes to sleep
		t.Fatal(err)
	}
	drainFor(150 * time.Millisecond)
	if d := tg.DrainInterval(); d != long {
		t.Errorf("asleep: %v, want %v", d, long)
	}
}

// TestStackRingsHoldMorePeriodsWhereMemoryAllows: where locked memory is not
// budgeted, a ring with stack copies holds as many periods' samples as the
// longest drain interval takes, up to a hundred, else thirty, while the
// target's rings stay within bigRingBudget; else ten.
func TestStackRingsHoldMorePeriodsWhereMemoryAllows(t *testing.T) {
	tg := &Target{kernel: &kernelSampler{ringsMayGrow: true}}
	tg.opts.Kernel.Period = time.Second / 999
	tg.opts.Kernel.MaxDrainInterval = time.Second // record's
	if got := tg.stackDrainPeriods(perfStackBytes); got != stackRingPeriods {
		t.Errorf("999 Hz, no rings yet: %d periods, want %d", got, stackRingPeriods)
	}
	if got := tg.stackDrainPeriods(16 << 10); got != stackRingPeriods {
		t.Errorf("999 Hz, 16 KiB copies: %d periods, want %d (a 2 MiB ring)", got, stackRingPeriods)
	}
	if got := tg.stackDrainPeriods(32 << 10); got != bigStackPeriods {
		t.Errorf("999 Hz, 32 KiB copies: %d periods, want %d (a ring of a hundred would be 4 MiB)", got, bigStackPeriods)
	}
	if n := perfRingBytes(tg.ringSpec(perfStackBytes)); n != 1<<20 {
		t.Errorf("a ring with 8 KiB copies holding %d periods: %d bytes, want 1 MiB", stackRingPeriods, n)
	}
	tg.kernel.ringBytes.Store(bigRingBudget - 1<<20)
	if got := tg.stackDrainPeriods(32 << 10); got != drainPeriods {
		t.Errorf("999 Hz, 1 MiB of budget left, 32 KiB copies: %d periods, want %d (thirty take 2 MiB)", got, drainPeriods)
	}
	if got := tg.stackDrainPeriods(perfStackBytes); got != stackRingPeriods {
		t.Errorf("999 Hz, 1 MiB of budget left for a 1 MiB ring: %d periods, want %d", got, stackRingPeriods)
	}
	tg.kernel.ringBytes.Store(bigRingBudget - 600<<10)
	if got := tg.stackDrainPeriods(perfStackBytes); got != bigStackPeriods {
		t.Errorf("999 Hz, 600 KiB of budget left: %d periods, want %d (a 512 KiB ring)", got, bigStackPeriods)
	}
	tg.kernel.ringBytes.Store(0)
	tg.opts.Kernel.Period = time.Second / 99
	if got := tg.stackDrainPeriods(perfStackBytes); got != 99 {
		t.Errorf("99 Hz, drains at most a second apart: %d periods, want 99", got)
	}
	tg.opts.Kernel.MaxDrainInterval = 0 // 100 ms
	if got := tg.stackDrainPeriods(perfStackBytes); got != drainPeriods {
		t.Errorf("99 Hz, drains at most 100 ms apart: %d periods, want %d", got, drainPeriods)
	}
	tg.opts.Kernel.Period = time.Second / 999
	tg.opts.Kernel.MaxDrainInterval = time.Second
	tg.kernel.ringsMayGrow = false
	if got := tg.stackDrainPeriods(perfStackBytes); got != drainPeriods {
		t.Errorf("999 Hz under a locked-memory budget: %d periods, want %d", got, drainPeriods)
	}
}

// TestSmallChainRingsFollowTheirRate: a ring with callchains that holds a
// hundred periods (the budget for big rings spent) holds drains to its
// interval only until a drain shows its rate: a thread that idles then
// lets them come as seldom as what its ring holds should it turn busy with
// samples as large as the largest drained allows (the big rings' interval,
// for samples small enough), one that keeps a CPU busy brings them to half
// the time its ring takes to fill.
func TestSmallChainRingsFollowTheirRate(t *testing.T) {
	tg := &Target{kernel: &kernelSampler{ringsMayGrow: true}, threads: map[int]*thread{}}
	tg.opts.Kernel.Period = time.Second / 999
	tg.opts.Kernel.MaxDrainInterval = time.Second
	long := tg.drainInterval(maxChainPeriods)
	small := &perfRing{chain: true, interval: tg.drainInterval(chainRingPeriods)}
	small.data = make([]byte, perfRingBytes(ringSpec{period: tg.opts.Kernel.Period, interval: small.interval}))
	big := &perfRing{chain: true, data: make([]byte, 2<<20), interval: long}
	tg.threads[1], tg.threads[2] = &thread{tid: 1}, &thread{tid: 2}
	tg.threads[1].kernel.ring, tg.threads[2].kernel.ring = big, small
	if long != time.Second || small.interval != 100*tg.opts.Kernel.Period {
		t.Fatalf("intervals %v and %v, want 1 s and 100 periods", long, small.interval)
	}
	if d := tg.DrainInterval(); d != small.interval {
		t.Errorf("before the small ring's first drain: %v, want %v", d, small.interval)
	}
	tk := &tg.threads[2].kernel
	t0 := time.Unix(100, 0)
	tk.noteDrain(t0)
	tk.drainedBytes = 2 * 200 // two samples in a second
	tk.noteDrain(t0.Add(time.Second))
	worst := time.Duration(len(small.data)/perfSampleMaxBytes(0)-perfRingSlack) * tg.opts.Kernel.Period
	if d := tg.DrainInterval(); d != worst || d > 2*small.interval {
		t.Errorf("its thread idle, no sample's size known: %v, want %v (what its ring holds of the largest samples)", d, worst)
	}
	tg.kernel.chainRecord = 400 // the largest sample drained
	turnsBusy := time.Duration(len(small.data)/400-perfRingSlack) * tg.opts.Kernel.Period
	if d := tg.DrainInterval(); d != turnsBusy || d <= small.interval || d >= long {
		t.Errorf("its thread idle, samples up to 400 bytes: %v, want %v (what its ring holds of them)", d, turnsBusy)
	}
	tg.kernel.chainRecord = 100
	if d := tg.DrainInterval(); d != long {
		t.Errorf("its thread idle, samples up to 100 bytes: %v, want %v", d, long)
	}
	tg.kernel.chainRecord = 200
	tk.drainedBytes = 999 * 200 // a sample of 200 bytes every period
	tk.noteDrain(t0.Add(2 * time.Second))
	holds := len(small.data) - perfRingSlack*perfSampleMaxBytes(0)
	want := time.Duration(float64(time.Second) * float64(holds) / (999 * 200) / 2)
	if d := tg.DrainInterval(); d != want || d <= small.interval || d >= long {
		t.Errorf("its thread busy: %v, want %v (half of what its %d bytes hold at 200 KB/s)", d, want, len(small.data))
	}
	tk.drainedBytes = 0 // idle again
	tk.noteDrain(t0.Add(time.Hour * 1000))
	if d, want := tg.DrainInterval(), tg.chainFill(small); d != want || tk.fill != time.Hour {
		t.Errorf("idle for a long while: %v (fill %v), want %v (fill an hour)", d, tk.fill, want)
	}
}

// TestEmptyDescendantRingsDoNotHalveTheDrainInterval: descendant rings are
// drained within the time one busy descendant takes to fill them, within
// half that while they hold records or a collect read samples within the
// last busyRingHold (a command that starts processes: with the whole fill
// time, a tick 20 ms late let the kernel drop a tenth of a forker's
// children).
func TestEmptyDescendantRingsDoNotHalveTheDrainInterval(t *testing.T) {
	tg := &Target{kernel: &kernelSampler{}, threads: map[int]*thread{}}
	tg.opts.Kernel.Period = time.Second / 999
	tg.opts.Kernel.MaxDrainInterval = time.Second
	const stack = 16 << 10
	kids := &processRings{stack: stack, rings: []*perfRing{fakeRing(2 << 20), fakeRing(2 << 20)}}
	tg.kernel.kids = kids
	fill := time.Duration((2<<20)/perfSampleMaxBytes(stack)-perfRingSlack) * tg.opts.Kernel.Period
	if d := tg.DrainInterval(); d != fill {
		t.Fatalf("empty descendant rings: %v, want %v (what one holds)", d, fill)
	}
	kids.rings[1].write(make([]byte, 64))
	if d := tg.DrainInterval(); d != fill/2 {
		t.Fatalf("a descendant ring with a record: %v, want %v (half what it holds)", d, fill/2)
	}
	kids.rings[1] = fakeRing(2 << 20)
	kids.sampledAt.Store(time.Now().Add(-busyRingHold / 2).UnixNano())
	if d := tg.DrainInterval(); d != fill/2 {
		t.Fatalf("empty descendant rings sampled %v ago: %v, want %v (half what one holds)", busyRingHold/2, d, fill/2)
	}
	kids.sampledAt.Store(time.Now().Add(-2 * busyRingHold).UnixNano())
	if d := tg.DrainInterval(); d != fill {
		t.Fatalf("empty descendant rings sampled %v ago: %v, want %v (what one holds)", 2*busyRingHold, d, fill)
	}
}

// TestDescendantCollectNotesSamples: a collect that reads a sample marks
// the descendant rings as recently sampled, one that reads none does not.
func TestDescendantCollectNotesSamples(t *testing.T) {
	p := &processRings{}
	p.noteSampled()
	if p.recentlySampled(time.Now()) {
		t.Fatal("no sample read, yet recently sampled")
	}
	p.samples = append(p.samples, ringSample{})
	p.noteSampled()
	if !p.recentlySampled(time.Now()) {
		t.Fatal("a sample read, yet not recently sampled")
	}
	if p.recentlySampled(time.Now().Add(busyRingHold)) {
		t.Fatalf("still recently sampled %v later", busyRingHold)
	}
}
