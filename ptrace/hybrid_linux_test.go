//go:build linux && (amd64 || arm64)

package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// hybridTally counts, for one copy size, the samples whose hybrid walk
// gave the whole copy's stack (same), of those how many took callers from
// the callchain (spliced), and the hybrid walks cut where the copy ended.
type hybridTally struct{ same, spliced, cut int }

// compareHybrid gives thread tid of tg a hybrid ring whose samples copy
// 32 KiB of stack, and walks each of its samples twice: with its whole
// copy and no callchain (what a ring of stack copies gives), and with the
// first size bytes of the copy and the sample's callchain, for each of
// sizes. Every hybrid walk not cut where its copy ends (StopReadFailed)
// must give the same addresses and end for the same reason as the whole
// copy's. It goes on until want samples whose whole copy held the stack
// were compared, or 20 s passed, and returns the tallies and the whole
// walk of the last.
func compareHybrid(t *testing.T, tg *Target, tid target.ThreadID, sizes []int, want int, name func(uint64) string) (map[int]*hybridTally, []uint64) {
	t.Helper()
	const whole = 32 << 10
	th := tg.threads[int(tid)]
	tg.hotMu.Lock()
	ok := tg.reopenRing(th, ringSpec{period: tg.opts.Kernel.Period, interval: 100 * time.Millisecond, stack: whole, hybrid: true})
	tg.hotMu.Unlock()
	if !ok {
		t.Fatal("the kernel refused a hybrid ring")
	}
	r := th.kernel.ring
	tally := map[int]*hybridTally{}
	for _, n := range sizes {
		tally[n] = &hybridTally{}
	}
	rec := make([]byte, perfHybridSampleMaxBytes(whole))
	var s perfHybridSample
	var regBuf [8]uint64
	var last []uint64
	var needs []int
	defer func() {
		slices.Sort(needs)
		if len(needs) > 0 {
			t.Logf("stack the whole walks read: median %d, 99th percentile %d, most %d bytes", needs[len(needs)/2], needs[len(needs)*99/100], needs[len(needs)-1])
		}
	}()
	mismatches := 0
	done := func() bool {
		for _, n := range sizes {
			if tally[n].same+tally[n].cut < want {
				return false
			}
		}
		return true
	}
	testprog.PollEvery(20*time.Second, 10*time.Millisecond, func() bool {
		tg.hotMu.Lock()
		defer tg.hotMu.Unlock()
		r.begin()
		defer r.consume()
		for {
			at, size, ok := r.next()
			if !ok {
				break
			}
			b := rec[:size]
			r.readAt(b, at)
			if err := parsePerfHybridSample(b, perfRegCount, regBuf[:], &s); err != nil {
				t.Fatal(err)
			}
			if len(s.regs) != perfRegCount {
				continue
			}
			regs := perfRegs(s.regs)
			var chain []uint64
			for i := 0; i < s.nchain; i++ {
				if v := binary.LittleEndian.Uint64(b[s.chainOff+8*i:]); v < perfContextMax {
					chain = append(chain, v)
				}
			}
			data := b[s.stackOff : s.stackOff+s.stackLen]
			lo, hi, ok := tg.stackBounds(regs.SP)
			if !ok {
				t.Fatalf("no stack mapping holds SP %#x", regs.SP)
			}
			full := unwind.Stack{Base: regs.SP, Data: data, Lo: lo, Hi: hi}
			wpcs, wres := tg.walk(tg.kernel.walker, regs, &full, make([]uint64, 0, 512), false)
			if wres.Stop != unwind.StopEnd || wres.LeftCopy() {
				continue // the whole copy did not hold the stack either
			}
			last = wpcs
			needs = append(needs, int(wres.Top-regs.SP))
			for _, n := range sizes {
				st := unwind.Stack{Base: regs.SP, Data: data[:min(n, len(data))], Lo: lo, Hi: hi, Chain: chain, ChainCut: len(chain) >= perfMaxStack()}
				hpcs, hres := tg.walk(tg.kernel.walker, regs, &st, make([]uint64, 0, 512), false)
				switch {
				case hres.Stop == unwind.StopReadFailed:
					tally[n].cut++
				case hres.Stop != wres.Stop || !slices.Equal(hpcs, wpcs):
					if mismatches++; mismatches <= 3 {
						t.Errorf("%d-byte copy and callchain %x: %v %s\nwhole copy: %v %s", n, chain, hres.Stop, frameNames(hpcs, name), wres.Stop, frameNames(wpcs, name))
					}
				default:
					tally[n].same++
					if hres.ChainFrames > 0 {
						tally[n].spliced++
					}
				}
			}
		}
		return done()
	})
	if !done() {
		for _, n := range sizes {
			t.Logf("%d bytes: %+v", n, *tally[n])
		}
		t.Fatalf("fewer than %d samples whose whole copy held the stack in 20 s", want)
	}
	return tally, last
}

// frameNames names pcs for a message.
func frameNames(pcs []uint64, name func(uint64) string) string {
	if name == nil {
		return fmt.Sprintf("%x", pcs)
	}
	return fmt.Sprint(names(pcs, name))
}

// TestHybridWalksAreTheWholeCopysWalks: on real processes, a walk of a
// small stack copy with the kernel's callchain of the same sample gives
// every address the walk of a 32 KiB copy gives, or is cut where the copy
// ends: bench/cbusy (frame pointers, a leaf without a record, libc's qsort
// and start_thread without them), Debian's python3 (none anywhere), and
// testdata/hybrid.c, 25 frames of 256 bytes with records under a leaf
// without one, on a thread started by clone (outermost by its table),
// whose walks from 512 bytes take most of their 28 frames from the chain.
func TestHybridWalksAreTheWholeCopysWalks(t *testing.T) {
	t.Run("cbusy", func(t *testing.T) {
		cc, err := exec.LookPath("gcc")
		if err != nil {
			t.Fatal("gcc is needed to build bench/cbusy: apt-get install gcc")
		}
		bin := filepath.Join(t.TempDir(), "cbusy")
		if out, err := exec.Command(cc, "-O2", "-fno-omit-frame-pointer", "-pthread", "-o", bin, filepath.Join("..", "bench", "cbusy", "cbusy.c")).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		p := testprog.Start(t, bin, "1", "60")
		tg := attachSampled(t, p.PID)
		tid := spinningThread(t, tg)
		captureFirst(t, tg, tid)
		tally, last := compareHybrid(t, tg, tid, []int{512, 2048}, 60, nil)
		t.Logf("cbusy: %+v %+v, a whole walk %x", *tally[512], *tally[2048], last)
		if tally[2048].cut > tally[2048].same/10 {
			t.Errorf("2 KiB copies: %d walks cut, %d whole: cbusy's stacks fit in 2 KiB", tally[2048].cut, tally[2048].same)
		}
	})
	t.Run("python3", func(t *testing.T) {
		py, err := exec.LookPath("/usr/bin/python3")
		if err != nil {
			t.Fatal("Debian's python3 is needed (apt-get install python3)")
		}
		p := testprog.Start(t, py, "-c", "import hashlib\nprint('ready', flush=True)\ndef f(n):\n    return f(n-1) if n else hashlib.sha1(bytes(4096)).digest()\nwhile True: sorted(range(200), key=lambda i: f(3))")
		tg := attachSampled(t, p.PID)
		tid := target.ThreadID(p.PID)
		captureFirst(t, tg, tid)
		tally, _ := compareHybrid(t, tg, tid, []int{4096, 8192}, 40, nil)
		t.Logf("python3: %+v %+v", *tally[4096], *tally[8192])
		if tally[8192].same < 36 {
			t.Errorf("8 KiB copies: %d of %d walks whole", tally[8192].same, tally[8192].same+tally[8192].cut)
		}
	})
	t.Run("frame records under a leaf", func(t *testing.T) {
		bin, name := buildFixture(t, "hybrid.c", "-O1", "-fno-omit-frame-pointer")
		p := testprog.Start(t, bin)
		tg := attachSampled(t, p.PID)
		tid := clonedThread(t, tg, p.PID)
		captureFirst(t, tg, tid)
		tally, last := compareHybrid(t, tg, tid, []int{512}, 40, name)
		if got := names(last, name); len(got) != 28 || got[0] != "spin" || got[26] != "thread_main" {
			t.Fatalf("whole walk %v: want spin, deep x25, thread_main, clone", got)
		}
		t.Logf("hybrid.c: %+v", *tally[512])
		if tally[512].same < 30 || tally[512].spliced < tally[512].same*9/10 {
			t.Errorf("512-byte copies: %d of %d walks took callers from the callchain", tally[512].spliced, tally[512].same)
		}
	})
}

// clonedThread returns the thread of testdata/hybrid.c's process pid other
// than its main thread.
func clonedThread(t *testing.T, tg *Target, pid int) target.ThreadID {
	t.Helper()
	var tid target.ThreadID
	testprog.WaitFor(t, 10*time.Second, func() bool {
		tids, err := tg.Threads(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range tids {
			if int(id) != pid {
				tid = id
				return true
			}
		}
		return false
	}, "the cloned thread")
	return tid
}

// attachSampled attaches to pid with kernel samples every millisecond and
// reads its images.
func attachSampled(t *testing.T, pid int) *Target {
	t.Helper()
	tg, err := Attach(pid, target.Options{Continuous: true, Kernel: target.KernelSampling{Period: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	if _, err := tg.Images(); err != nil {
		t.Fatal(err)
	}
	return tg
}

// captureFirst captures tid once, which stops it and opens its ring, and
// builds the unwind tables of what tg maps.
func captureFirst(t *testing.T, tg *Target, tid target.ThreadID) {
	t.Helper()
	if err := captureStop(t, tg, tid, target.NewCapture(512, 64<<10)); err != nil {
		t.Fatal(err)
	}
	tg.PrepareUnwind()
}

// TestHybridRingFollowsTheWalks: a thread whose walks need 7 KiB of stack
// copy but 512 bytes with the callchain (testdata/hybrid.c) moves, after
// chainAfter samples, to hybrid samples copying 512 bytes; drained from
// there, its stacks are those gdb's bt gives, spin to clone, with the
// callers past the copy from the callchain, and drains allocate nothing.
// Made to meet a stack its copy and callchain cannot serve, the ring goes
// back to whole copies.
func TestHybridRingFollowsTheWalks(t *testing.T) {
	bin, name := buildFixture(t, "hybrid.c", "-O1", "-fno-omit-frame-pointer")
	p := testprog.Start(t, bin)
	tg := attachSampled(t, p.PID)
	tid := clonedThread(t, tg, p.PID)
	captureFirst(t, tg, tid)
	th := tg.threads[int(tid)]
	caps := drainCaps(8)
	if !testprog.PollEvery(20*time.Second, 10*time.Millisecond, func() bool {
		drainRing(t, tg, tid, caps)
		return th.kernel.ring.hybrid
	}) {
		t.Fatalf("no hybrid ring after 20 s (%d walks in a row served, needing %d bytes)", th.kernel.slim, th.kernel.slimNeed)
	}
	if th.kernel.ringStack < perfStackBytes {
		t.Errorf("whole copies of %d bytes to go back to", th.kernel.ringStack)
	}
	var got *target.Capture
	if !testprog.PollEvery(10*time.Second, 10*time.Millisecond, func() bool {
		n := drainRing(t, tg, tid, caps)
		for _, c := range caps[:n] {
			if c.Walk.ChainFrames > 0 {
				got = c
			}
		}
		return got != nil
	}) {
		t.Fatal("no hybrid sample with callers from its callchain in 10 s")
	}
	r := th.kernel.ring
	if !r.hybrid || r.sampleMax != perfHybridSampleMaxBytes(512) {
		t.Errorf("ring hybrid %v, samples up to %d bytes; want a 512-byte copy (%d)", r.hybrid, r.sampleMax, perfHybridSampleMaxBytes(512))
	}
	if got.Walk.Stop != unwind.StopEnd || got.Walk.ChainFrames < 20 {
		t.Errorf("hybrid walk %v, %d frames from the callchain; want the end, 20 or more", got.Walk.Stop, got.Walk.ChainFrames)
	}
	ours := names(got.PCs, name)
	gdb := gdbBacktrace(t, p.PID, int(tid))
	if len(ours) != len(gdb) {
		t.Fatalf("hybrid stack %v\ngdb %v", ours, gdb)
	}
	for i := range ours {
		if ours[i] != "?" && ours[i] != gdb[i] || ours[i] == "?" && !strings.Contains(gdb[i], "clone") {
			t.Fatalf("frame %d: %s, gdb %s\nhybrid stack %v\ngdb %v", i, ours[i], gdb[i], ours, gdb)
		}
	}

	// Drains and captures from a hybrid ring allocate nothing.
	allocs := testing.AllocsPerRun(10, func() {
		time.Sleep(3 * time.Millisecond)
		if _, err := tg.DrainSamples(tid, caps); err != nil {
			t.Fatal(err)
		}
		if err := tg.Capture(tid, caps[0]); err != nil && !errors.Is(err, ErrNoSample) {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("drain and capture from a hybrid ring: %.1f allocations, want 0", allocs)
	}
	if !th.kernel.ring.hybrid {
		t.Fatal("the ring left hybrid samples")
	}

	// A walk the hybrid sample cannot serve sends the ring back.
	tg.hotMu.Lock()
	th.kernel.needStack = true
	tg.hotMu.Unlock()
	drainRing(t, tg, tid, caps)
	if th.kernel.ring.hybrid || th.kernel.ring.chain || th.kernel.exactNeed != 2*chainAfter {
		t.Errorf("after a cut walk: hybrid %v, callchains %v, %d walks needed next; want whole copies, %d", th.kernel.ring.hybrid, th.kernel.ring.chain, th.kernel.exactNeed, 2*chainAfter)
	}
}

// gdbBacktrace returns the function names of thread tid's frames as gdb's
// bt gives them (it stops the process for the while).
func gdbBacktrace(t *testing.T, pid, tid int) []string {
	t.Helper()
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		t.Fatal("gdb is needed: apt-get install gdb")
	}
	out, err := exec.Command(gdb, "-p", fmt.Sprint(pid), "-batch", "-nx", "-ex", "thread apply all bt").CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	var frames []string
	in := false
	head := regexp.MustCompile(`^Thread \d+ .*\(LWP (\d+)\)`)
	frame := regexp.MustCompile(`^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(`)
	for _, line := range strings.Split(string(out), "\n") {
		if m := head.FindStringSubmatch(line); m != nil {
			in = m[1] == fmt.Sprint(tid)
			continue
		}
		if m := frame.FindStringSubmatch(line); in && m != nil {
			frames = append(frames, m[1])
		}
	}
	if len(frames) == 0 {
		t.Fatalf("gdb gave no frames of thread %d:\n%s", tid, out)
	}
	return frames
}

// hybridRecord builds a hybrid sample record of thread tid: the chain's
// entries, the registers, size bytes of stack of which dyn were copied.
func hybridRecord(tid uint32, chain, regs []uint64, stack []byte, dyn uint64) []byte {
	rec := chainRecord(tid, chain, regs)
	le := binary.LittleEndian
	rec = le.AppendUint64(rec, uint64(len(stack)))
	rec = append(rec, stack...)
	if len(stack) > 0 {
		rec = le.AppendUint64(rec, dyn)
	}
	le.PutUint16(rec[6:], uint16(len(rec)))
	return rec
}

func TestParsePerfHybridSample(t *testing.T) {
	user := uint64(1<<64 + unix.PERF_CONTEXT_USER)
	stack := make([]byte, 64)
	stack[0] = 0xaa
	rec := hybridRecord(42, []uint64{user, 0x401000, 0x402000}, []uint64{1, 2, 3}, stack, 40)
	var s perfHybridSample
	regs := make([]uint64, 0, 8)
	if err := parsePerfHybridSample(rec, 3, regs, &s); err != nil {
		t.Fatal(err)
	}
	if s.tid != 42 || s.time != sampleTime || s.nchain != 3 || !slices.Equal(s.regs, []uint64{1, 2, 3}) || s.stackLen != 40 || rec[s.stackOff] != 0xaa {
		t.Fatalf("parsed %+v", s)
	}
	if v := binary.LittleEndian.Uint64(rec[s.chainOff+16:]); v != 0x402000 {
		t.Errorf("third entry %#x", v)
	}
	// A dynamic size beyond the copy is the copy's.
	if err := parsePerfHybridSample(hybridRecord(42, nil, []uint64{1, 2, 3}, stack, 1<<40), 3, regs, &s); err != nil || s.stackLen != 64 {
		t.Errorf("dynamic size past the copy: %v, %d bytes", err, s.stackLen)
	}
	// Lengths that do not fit the record are errors, never reads past it.
	long := hybridRecord(42, []uint64{user}, []uint64{1, 2, 3}, stack, 64)
	binary.LittleEndian.PutUint64(long[24:], 1<<40)
	big := hybridRecord(42, []uint64{user}, []uint64{1, 2, 3}, stack, 64)
	binary.LittleEndian.PutUint64(big[32+8+8+24:], 1<<20)
	for name, r := range map[string][]byte{
		"chain too long": long,
		"stack too long": big,
		"no dynamic size": func() []byte {
			r := slices.Clone(big[:len(big)-8])
			binary.LittleEndian.PutUint64(r[32+8+8+24:], 64)
			binary.LittleEndian.PutUint16(r[6:], uint16(len(r)))
			return r
		}(),
	} {
		if err := parsePerfHybridSample(r, 3, regs, &s); err == nil {
			t.Errorf("%s: no error (%+v)", name, s)
		}
	}
}

func FuzzParsePerfHybridSample(f *testing.F) {
	f.Add(hybridRecord(7, []uint64{uint64(1<<64 + unix.PERF_CONTEXT_USER), 0x401000}, []uint64{1, 2, 3}, make([]byte, 32), 24))
	f.Add(hybridRecord(7, nil, nil, nil, 0))
	f.Fuzz(func(t *testing.T, rec []byte) {
		var s perfHybridSample
		regs := make([]uint64, 0, 8)
		if parsePerfHybridSample(rec, 3, regs, &s) != nil {
			return
		}
		if s.chainOff+8*s.nchain > len(rec) || len(s.regs) > 3 || s.stackOff+s.stackLen > len(rec) || s.stackLen < 0 {
			t.Fatalf("parsed %+v out of a %d-byte record", s, len(rec))
		}
	})
}

// TestHybridRingsHoldMorePeriods: where locked memory is not budgeted, a
// hybrid ring holds what hybridRingBytes holds, up to the longest drain
// interval (bench/cbusy's 2.5 KiB copies at 999 Hz: 280 periods, not a
// hundred); with the target's rings near bigRingBudget, or under a
// locked-memory budget, as many as a ring of whole copies that large.
func TestHybridRingsHoldMorePeriods(t *testing.T) {
	tg := &Target{kernel: &kernelSampler{ringsMayGrow: true}}
	tg.opts.Kernel.Period = time.Second / 999
	tg.opts.Kernel.MaxDrainInterval = time.Second // record's
	size := perfHybridSampleMaxBytes(2560)
	want := hybridRingBytes/size - perfRingSlack
	spec := tg.hybridSpec(2560)
	if spec.interval != time.Duration(want)*tg.opts.Kernel.Period || want <= stackRingPeriods {
		t.Errorf("999 Hz, 2.5 KiB copies: drains every %v, want %d periods", spec.interval, want)
	}
	if n := perfRingBytes(spec); n != hybridRingBytes {
		t.Errorf("999 Hz, 2.5 KiB copies: a ring of %d bytes, want %d", n, hybridRingBytes)
	}
	tg.kernel.ringBytes.Store(bigRingBudget - hybridRingBytes + 1)
	if got, old := tg.hybridDrainPeriods(size), tg.stackDrainPeriods(size-perfSampleMaxBytes(1)+1); got != old || got > stackRingPeriods {
		t.Errorf("999 Hz, budget spent: %d periods, want a whole copy's ring's %d", got, old)
	}
	tg.kernel.ringBytes.Store(0)
	tg.opts.Kernel.Period = time.Second / 99
	if got := tg.hybridDrainPeriods(size); got != 99 {
		t.Errorf("99 Hz: %d periods, want 99 (a second)", got)
	}
	tg.opts.Kernel.Period = time.Second / 999
	tg.kernel.ringsMayGrow = false
	if got := tg.hybridDrainPeriods(size); got != drainPeriods {
		t.Errorf("999 Hz under a locked-memory budget: %d periods, want %d", got, drainPeriods)
	}
}
