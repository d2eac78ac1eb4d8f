//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"0", []int{0}},
		{"0-3", []int{0, 1, 2, 3}},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}},
	} {
		got, err := parseCPUList(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "x", "3-1", "-1", "0-999999", "1,"} {
		if got, err := parseCPUList(bad); err == nil {
			t.Errorf("parseCPUList(%q) = %v, want an error", bad, got)
		}
	}
}

// TestProcessRingsFit: process rings serve a launched command only where
// callchains are right for all its code: a static Go binary, or any with
// --unwind fp; and only when asked for, with kernel samples.
func TestProcessRingsFit(t *testing.T) {
	goBin := testprog.BuildGo(t, "godeep")
	cBin := testprog.BuildC(t, "churn.c")
	on := target.Options{Continuous: true, Kernel: target.KernelSampling{Period: time.Millisecond, ProcessRings: true}}
	with := func(f func(*target.Options)) target.Options { o := on; f(&o); return o }
	for _, tc := range []struct {
		name string
		path string
		opts target.Options
		want bool
	}{
		{"static Go, auto", goBin, on, true},
		{"C with libc, auto", cBin, on, false},
		{"C with libc, --unwind fp", cBin, with(func(o *target.Options) { o.Unwind = unwind.MethodFP }), true},
		{"static Go, --unwind cfi", goBin, with(func(o *target.Options) { o.Unwind = unwind.MethodCFI }), false},
		{"not asked for", goBin, with(func(o *target.Options) { o.Kernel.ProcessRings = false }), false},
		{"no kernel samples", goBin, with(func(o *target.Options) { o.Kernel.Period = 0 }), false},
		{"not a file", "/nonexistent", on, false},
	} {
		if got := processRingsFit(tc.path, tc.opts); got != tc.want {
			t.Errorf("%s: processRingsFit = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// fakeRing is a ring in ordinary memory that a test writes records into as
// the kernel would (never closed: close would unmap it).
func fakeRing(size int) *perfRing {
	page := os.Getpagesize()
	mem := make([]byte, page+size)
	return &perfRing{mem: mem, meta: (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0])), data: mem[page:], chain: true}
}

// write appends rec at the ring's head, wrapping around its end.
func (r *perfRing) write(rec []byte) {
	head := r.meta.Data_head
	i := head & uint64(len(r.data)-1)
	n := copy(r.data[i:], rec)
	copy(r.data, rec[n:])
	r.meta.Data_head = head + uint64(len(rec))
}

// processRecord is a PERF_RECORD_SAMPLE of process rings' type (TID,
// TIME, CALLCHAIN) at time 0 with a user-context marker before the
// addresses.
func processRecord(pid, tid uint32, pcs ...uint64) []byte {
	return processRecordAt(0, pid, tid, pcs...)
}

// processRecordAt is processRecord at a time.
func processRecordAt(time uint64, pid, tid uint32, pcs ...uint64) []byte {
	le := binary.LittleEndian
	n := 1 + len(pcs)
	rec := make([]byte, processRecordMin+8*n)
	le.PutUint32(rec[0:], unix.PERF_RECORD_SAMPLE)
	le.PutUint16(rec[6:], uint16(len(rec)))
	le.PutUint32(rec[8:], pid)
	le.PutUint32(rec[12:], tid)
	le.PutUint64(rec[16:], time)
	le.PutUint64(rec[24:], uint64(n))
	le.PutUint64(rec[32:], uint64(1<<64+unix.PERF_CONTEXT_USER))
	for i, pc := range pcs {
		le.PutUint64(rec[40+8*i:], pc)
	}
	return rec
}

func newFakeProcessRings(pid int, rings ...*perfRing) *processRings {
	p := &processRings{pid: pid, rings: rings, maxFrames: 4, rec: make([]byte, processRecordMax()), heads: map[uint32]sampleList{}}
	p.samples = make([]ringSample, 0, 64)
	p.pcs = make([]uint64, 0, 256)
	return p
}

func takeAll(p *processRings, tid int) [][]uint64 {
	caps := []*target.Capture{target.NewCapture(8, 0), target.NewCapture(8, 0)}
	var got [][]uint64
	for {
		n := p.take(tid, caps)
		for _, c := range caps[:n] {
			got = append(got, slices.Clone(c.PCs))
		}
		if n < len(caps) {
			return got
		}
	}
}

// TestProcessRingsCollect: samples of both CPUs' rings reach their thread,
// each CPU's oldest first, once; a child process's samples are kept and
// malformed records dropped; a chain longer than maxFrames is cut and marked; an
// executable mapping of the process is noted.
func TestProcessRingsCollect(t *testing.T) {
	r0, r1 := fakeRing(512), fakeRing(512)
	// r1's records start near its end, so that they wrap around it.
	r1.meta.Data_head, r1.meta.Data_tail = 480, 480
	p := newFakeProcessRings(100, r0, r1)
	r0.write(processRecord(100, 101, 0x10, 0x11))
	r0.write(processRecord(200, 201, 0x99)) // a child process
	r1.write(processRecord(100, 102, 0x20))
	r0.write(processRecord(100, 101, 0x12, 0x13))
	bad := processRecord(100, 101, 0x14)
	binary.LittleEndian.PutUint64(bad[24:], 1000) // more entries than the record holds
	r1.write(bad)
	r1.write(processRecord(100, 102, 1, 2, 3, 4, 5, 6))
	for range 3 {
		r1.write(processRecord(100, 103, 0x30, 0x31, 0x32))
	}
	r0.write(mmap2Record(1, 100, 0x7000, 0x1000, "/lib/x.so"))

	p.collect()
	if !p.mappedSince() || p.mappedSince() {
		t.Errorf("mappedSince: want true once after an executable mapping of the process")
	}
	if r0.meta.Data_tail != r0.meta.Data_head || r1.meta.Data_tail != r1.meta.Data_head {
		t.Errorf("rings not freed after collect")
	}
	if got := takeAll(p, 101); !slices.EqualFunc(got, [][]uint64{{0x10, 0x11}, {0x12, 0x13}}, slices.Equal) {
		t.Errorf("thread 101: %x", got)
	}
	if got := takeAll(p, 101); len(got) != 0 {
		t.Errorf("thread 101 taken twice: %x", got)
	}
	caps := []*target.Capture{target.NewCapture(8, 0), target.NewCapture(8, 0), target.NewCapture(8, 0)}
	if n := p.take(102, caps); n != 2 || !slices.Equal(caps[0].PCs, []uint64{0x20}) || caps[0].Walk.Stop != unwind.StopEnd ||
		!slices.Equal(caps[1].PCs, []uint64{1, 2, 3, 4}) || caps[1].Walk.Stop != unwind.StopMaxFrames {
		t.Errorf("thread 102: %d samples, %x (%v), %x (%v); want [20] whole and [1 2 3 4] cut at 4 frames", n, caps[0].PCs, caps[0].Walk.Stop, caps[1].PCs, caps[1].Walk.Stop)
	}
	if got := takeAll(p, 103); len(got) != 3 {
		t.Errorf("thread 103 (records wrapping the ring): %x, want 3 samples", got)
	}
	if got := takeAll(p, 201); !slices.EqualFunc(got, [][]uint64{{0x99}}, slices.Equal) {
		t.Errorf("a child process's samples: %x, want [99]", got)
	}
	// The next collect replaces what was left.
	r0.write(processRecord(100, 104, 0x40))
	p.collect()
	if old, now := takeAll(p, 102), takeAll(p, 104); len(old) != 0 || len(now) != 1 {
		t.Errorf("after a second collect: thread 102 %x (left from the first), thread 104 %x", old, now)
	}
}

// TestProcessRingsCollectDoesNotAllocate: moving a drain's samples out of
// the rings and handing them out allocates nothing in steady state.
func TestProcessRingsCollectDoesNotAllocate(t *testing.T) {
	r := fakeRing(4096)
	p := newFakeProcessRings(100, r)
	caps := []*target.Capture{target.NewCapture(8, 0), target.NewCapture(8, 0)}
	recs := [][]byte{processRecord(100, 101, 1, 2, 3), processRecord(100, 102, 4, 5), processRecord(100, 101, 6)}
	allocs := testing.AllocsPerRun(100, func() {
		for _, rec := range recs {
			r.write(rec)
		}
		p.collect()
		for p.take(101, caps) == len(caps) {
		}
		for p.take(102, caps) == len(caps) {
		}
	})
	if allocs != 0 {
		t.Errorf("collect and take: %v allocations a drain, want 0", allocs)
	}
}

// FuzzProcessRingCollect: whatever bytes a ring holds (the kernel writes
// them, but the command's threads decide their callchains), collect and
// take neither panic nor keep more than the ring held.
func FuzzProcessRingCollect(f *testing.F) {
	f.Add(processRecord(7, 8, 0x10, 0x20))
	f.Add(append(processRecord(7, 9, 1, 2, 3, 4, 5), processRecord(7, 9)...))
	f.Add([]byte{9, 0, 0, 0, 0, 0, 8, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := fakeRing(1024)
		p := newFakeProcessRings(7, r)
		// Kept while the command runs, then read with what the ring
		// holds at the end.
		r.write(data[:min(len(data), 1024)])
		p.keep()
		r.write(data[:min(len(data), 1024)])
		p.collect()
		caps := []*target.Capture{target.NewCapture(8, 0)}
		total := 0
		for _, ts := range p.threadsWithSamples(nil) {
			for p.take(ts.tid, caps) == 1 {
				total++
				if len(caps[0].PCs) > p.maxFrames {
					t.Fatalf("%d addresses, more than maxFrames %d", len(caps[0].PCs), p.maxFrames)
				}
			}
		}
		if total > 2*len(data)/processRecordMin {
			t.Fatalf("%d samples from %d bytes", total, len(data))
		}
	})
}

// funcRange returns the address range of the symbol name in the ELF file
// path.
func funcRange(t *testing.T, path, name string) (lo, hi uint64) {
	t.Helper()
	for _, s := range testprog.ELFSymbols(t, path) {
		if s.Name == name {
			return s.Value, s.Value + s.Size
		}
	}
	t.Fatalf("%s has no symbol %s", path, name)
	return 0, 0
}

// launchForTest launches args with opts, and kills and closes it at the
// test's end.
func launchForTest(t *testing.T, args []string, opts target.Options) *Launched {
	t.Helper()
	l, err := Launch(args, opts)
	if err != nil {
		t.Fatalf("launch %s: %v", args[0], err)
	}
	t.Cleanup(func() {
		l.cmd.Process.Kill()
		l.Wait()
		l.Close()
	})
	return l
}

// launchWithProcessRings launches bin with process rings at the period,
// and stops it at the test's end.
func launchWithProcessRings(t *testing.T, args []string, opts target.Options) *Launched {
	t.Helper()
	opts.Continuous, opts.Kernel.Period, opts.Kernel.ProcessRings = true, time.Millisecond, true
	l := launchForTest(t, args, opts)
	if l.processRings() == nil {
		t.Fatalf("launch %s: no process rings", args[0])
	}
	return l
}

// TestLaunchWithProcessRings: a static Go program launched with process
// rings is sampled from its start, every thread with whole callchains
// (spin, then recurse as deep as asked), without a thread ever stopped or
// given a ring of its own; the samples add up to the CPU time its threads
// used.
func TestLaunchWithProcessRings(t *testing.T) {
	bin := testprog.BuildGo(t, "godeep")
	l := launchWithProcessRings(t, []string{bin, "2", "8"}, target.Options{})
	spinLo, spinHi := funcRange(t, bin, "main.spin")
	recLo, recHi := funcRange(t, bin, "main.recurse")
	caps := make([]*target.Capture, 8)
	for i := range caps {
		caps[i] = target.NewCapture(128, 0)
	}
	var samples, inSpin, whole int
	cpu := map[target.ThreadID]time.Duration{}
	if !testprog.PollEvery(20*time.Second, 100*time.Millisecond, func() bool {
		tids, err := l.Threads(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tid := range tids {
			if info, err := l.Info(tid); err == nil {
				cpu[tid] = info.CPUTime
			}
			for {
				n, err := l.DrainSamples(tid, caps)
				if err != nil {
					t.Fatalf("drain thread %d: %v", tid, err)
				}
				for _, c := range caps[:n] {
					samples++
					if c.Stopped != 0 || c.Thread != tid {
						t.Fatalf("sample of thread %d: stopped %v, thread %d", tid, c.Stopped, c.Thread)
					}
					if len(c.PCs) == 0 || c.PCs[0] < spinLo || c.PCs[0] >= spinHi {
						continue
					}
					inSpin++
					deep := 0
					for _, pc := range c.PCs[1:] {
						if pc-1 >= recLo && pc-1 < recHi {
							deep++
						}
					}
					// Threads recurse 8 and 13 deep, plus the first call.
					if deep >= 9 && c.Walk.Stop == unwind.StopEnd {
						whole++
					}
				}
				if n < len(caps) {
					break
				}
			}
		}
		return inSpin >= 500
	}) {
		t.Fatalf("%d samples in main.spin (of %d) in 20 s, want 500", inSpin, samples)
	}
	if whole < inSpin*95/100 {
		t.Errorf("%d of %d samples in main.spin have its callers, 9 or more main.recurse, whole; want 95%%", whole, inSpin)
	}
	if n := l.kernel.rings.Load(); n != 0 {
		t.Errorf("%d threads got rings of their own", n)
	}
	var used time.Duration
	for _, c := range cpu {
		used += c
	}
	// The last listing's CPU time lags the samples drained after it by up
	// to a listing's 100 ms on two threads.
	if periods := int(used / time.Millisecond); samples < periods*8/10 || samples > periods+300 {
		t.Errorf("%d samples for %v of CPU time at 1 ms", samples, used)
	}
}

// TestProcessRingsKeepShortLivedThreads: threads that start and end between
// two listings are still sampled: their samples come with them listed as
// departed, and their CPU time is as many periods.
func TestProcessRingsKeepShortLivedThreads(t *testing.T) {
	bin := testprog.BuildC(t, "churn.c")
	l := launchWithProcessRings(t, []string{bin, "2"}, target.Options{Unwind: unwind.MethodFP})
	seenAlive := map[target.ThreadID]bool{}
	var departedSamples int
	testprog.PollEvery(20*time.Second, 200*time.Millisecond, func() bool {
		tids, err := l.Threads(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tid := range tids {
			l.stateMu.Lock()
			_, live := l.threads[int(tid)]
			l.stateMu.Unlock()
			if live {
				// Listed alive: it may end before its CPU time is read,
				// which is no error (the sampler counts it gone).
				seenAlive[tid] = true
				if _, err := l.Info(tid); err != nil && !errors.Is(err, target.ErrNoThread) {
					t.Fatalf("info of thread %d: %v", tid, err)
				}
				drainAll(t, l.Target, int(tid), 1)
				continue
			}
			info, err := l.Info(tid)
			if err != nil {
				t.Fatalf("info of departed thread %d: %v", tid, err)
			}
			n := len(drainAll(t, l.Target, int(tid), 1))
			if !seenAlive[tid] && n > 0 {
				departedSamples += n
				if want := time.Duration(n) * time.Millisecond; info.CPUTime != want {
					t.Errorf("thread %d, never listed alive, with %d samples: CPU time %v, want %v", tid, n, info.CPUTime, want)
				}
			}
		}
		return departedSamples >= 50
	})
	if departedSamples < 50 {
		t.Errorf("%d samples of threads never listed alive in 20 s, want 50", departedSamples)
	}
}

// TestProcessRingsKeepUntilExit: while the command runs, Keep moves its
// samples into macprof's memory without a listing; once it exited, Keep
// says so, the listing that finds the exit still gives every thread that
// left samples (none of them ever listed alive) as departed, the next gives
// none, and the samples add up to the CPU time the process used.
func TestProcessRingsKeepUntilExit(t *testing.T) {
	bin := testprog.BuildPkg(t, "github.com/macprof/macprof/bench/demo")
	l := launchWithProcessRings(t, []string{bin, "-threads", "2", "-duration", "1s"}, target.Options{})
	p := l.processRings()
	keeps, kept := 0, 0
	if !testprog.PollEvery(20*time.Second, 100*time.Millisecond, func() bool {
		if !l.Keep() {
			return true
		}
		keeps++
		p.mu.Lock()
		kept = max(kept, p.keptBytes)
		p.mu.Unlock()
		return false
	}) {
		t.Fatal("Keep still keeping 20 s after the start of a 1 s command")
	}
	if keeps < 5 || kept == 0 {
		t.Errorf("Keep kept %d times, at most %d bytes, during a 1 s command; want 5 times and some bytes", keeps, kept)
	}
	// Its CPU time once final: threads still exiting when Keep saw the
	// exit (a loaded machine delays them) add their last runs.
	var cpu time.Duration
	testprog.PollEvery(2*time.Second, 20*time.Millisecond, func() bool {
		d, err := l.ProcessCPU()
		if err != nil {
			t.Fatal(err)
		}
		final := d == cpu
		cpu = d
		return final
	})
	tids, err := l.Threads(nil)
	if !errors.Is(err, target.ErrExited) || len(tids) < 2 {
		t.Fatalf("the listing after the exit: %v, %v; want ErrExited with the threads that left samples", tids, err)
	}
	var samples int
	var infoCPU time.Duration
	for _, tid := range tids {
		info, err := l.Info(tid)
		if err != nil {
			t.Fatalf("info of thread %d: %v", tid, err)
		}
		infoCPU += info.CPUTime
		samples += len(drainAll(t, l.Target, int(tid), 2))
	}
	if again, err := l.Threads(nil); !errors.Is(err, target.ErrExited) || len(again) != 0 {
		t.Errorf("second listing after the exit: %v, %v; want ErrExited alone", again, err)
	}
	// Each thread that ran (the demo's two workers and Go's own, at most
	// a dozen) leaves less than a period unsampled at its exit: at high
	// load, where the process gets a few tens of ms, that is more than a
	// tenth.
	if periods := int(cpu / time.Millisecond); samples < min(periods*9/10, periods-12) || samples > periods+5 {
		t.Errorf("%d samples for %v of process CPU time at 1 ms", samples, cpu)
	}
	if infoCPU != time.Duration(samples)*time.Millisecond {
		t.Errorf("threads never listed alive: CPU time %v, want their %d samples' worth", infoCPU, samples)
	}
}

// readRecord is the kernel's record of the count of a descendant's thread
// at its exit (inherit_stat, read_format 0): ns of CPU time on one CPU.
func readRecord(time uint64, pid, tid uint32, ns uint64) []byte {
	le := binary.LittleEndian
	rec := make([]byte, 8, 48)
	le.PutUint32(rec[0:], unix.PERF_RECORD_READ)
	rec = le.AppendUint32(rec, pid)
	rec = le.AppendUint32(rec, tid)
	rec = le.AppendUint64(rec, ns)
	return sampleID(rec, pid, time)
}

// TestDescendantRingsCollect: descendant rings drop the samples of the
// command's own process (its threads' own rings have them) and keep its
// children's; a child's thread's exit counts, one per CPU, add up to the
// CPU time it used, listed once, with or without samples; the command's
// own threads' exit counts are not kept.
func TestDescendantRingsCollect(t *testing.T) {
	r0, r1 := fakeRing(1024), fakeRing(1024)
	p := newFakeProcessRings(100, r0, r1)
	p.kidsOnly, p.exits = true, map[uint32]threadExit{}
	r0.write(processRecord(100, 100, 0x10))
	r0.write(processRecord(200, 200, 0x20, 0x21))
	r1.write(processRecord(200, 200, 0x22))
	r1.write(processRecord(100, 101, 0x11))
	r0.write(readRecord(5, 200, 200, 1_500_000))
	r1.write(readRecord(5, 200, 200, 700_000))
	r0.write(readRecord(6, 300, 300, 400_000)) // ran less than a period
	r1.write(readRecord(7, 100, 101, 9_000_000))
	p.collect()
	if got := takeAll(p, 100); len(got) != 0 {
		t.Errorf("the command's own samples kept: %x", got)
	}
	if got := takeAll(p, 101); len(got) != 0 {
		t.Errorf("the command's other thread's samples kept: %x", got)
	}
	listed := map[int]threadSamples{}
	for _, ts := range p.threadsWithSamples(nil) {
		if _, twice := listed[ts.tid]; twice {
			t.Errorf("thread %d listed twice", ts.tid)
		}
		listed[ts.tid] = ts
	}
	want := map[int]threadSamples{
		200: {tid: 200, pid: 200, n: 2, exitCPU: 2200 * time.Microsecond, exitEvents: 2, exited: true},
		300: {tid: 300, pid: 300, exitCPU: 400 * time.Microsecond, exitEvents: 1, exited: true},
	}
	if !maps.Equal(listed, want) {
		t.Errorf("listed %+v, want %+v", listed, want)
	}
	if got := takeAll(p, 200); !slices.EqualFunc(got, [][]uint64{{0x20, 0x21}, {0x22}}, slices.Equal) {
		t.Errorf("the child's samples: %x", got)
	}
	// The next collect lists no exit again.
	p.collect()
	if got := p.threadsWithSamples(nil); len(got) != 0 {
		t.Errorf("after a second collect: %+v, want none", got)
	}
}

// TestDescendantThreadsCPU: a descendant's thread listed from descendant
// rings is departed, of its own process, with its samples' periods as CPU
// time over several collects, and the kernel's count once it exited, when
// that is more.
func TestDescendantThreadsCPU(t *testing.T) {
	const period = time.Millisecond
	r := fakeRing(1024)
	p := newFakeProcessRings(100, r)
	p.kidsOnly, p.exits = true, map[uint32]threadExit{}
	tg := &Target{pid: 100, opts: target.Options{Kernel: target.KernelSampling{Period: period}}, departed: map[int]*thread{}, tasks: &taskList{dir: -1},
		kernel: &kernelSampler{}}
	r.write(processRecord(200, 201, 0x20))
	r.write(processRecord(200, 201, 0x20))
	p.collect()
	tg.listDescendantThreads(p)
	th := tg.departed[201]
	if th == nil || th.proc != 200 || th.lastCPU != 2*period {
		t.Fatalf("after two samples: %+v, want thread 201 of process 200 with 2 ms", th)
	}
	r.write(processRecord(200, 201, 0x20))
	r.write(readRecord(9, 200, 201, 3_400_000))
	p.collect()
	tg.listDescendantThreads(p)
	if th.lastCPU != 3400*time.Microsecond {
		t.Errorf("after its exit: %v, want the kernel's 3.4 ms", th.lastCPU)
	}
}

// TestDescendantThreadsCPUBoundedBySamples: the kernel's counts at a
// descendant's thread's exit add to its samples' periods at most a period
// for each CPU's event that counted any. perf record under record makes
// the kernel write counts that are not the thread's (600 ms at the exit of
// bench/cbusy's main thread, which used 3 ms): summed as they were, the
// profile held 161% of the CPU time rusage and schedstat gave.
func TestDescendantThreadsCPUBoundedBySamples(t *testing.T) {
	const period = time.Millisecond
	r0, r1 := fakeRing(1024), fakeRing(1024)
	p := newFakeProcessRings(100, r0, r1)
	p.kidsOnly, p.exits = true, map[uint32]threadExit{}
	tg := &Target{pid: 100, opts: target.Options{Kernel: target.KernelSampling{Period: period}}, departed: map[int]*thread{}, tasks: &taskList{dir: -1},
		kernel: &kernelSampler{}}
	r0.write(processRecord(200, 200, 0x20))
	r0.write(processRecord(200, 200, 0x20))
	r0.write(processRecord(200, 201, 0x20))
	r0.write(readRecord(9, 200, 200, 600_000_000))
	r1.write(readRecord(9, 200, 200, 1_000_000))
	r0.write(readRecord(9, 200, 201, 1_600_000))
	r1.write(readRecord(9, 200, 201, 0))
	r0.write(readRecord(9, 200, 202, 300_000))
	p.collect()
	tg.listDescendantThreads(p)
	for tid, want := range map[int]time.Duration{
		200: 4 * period,              // 2 samples, 2 CPUs' counts
		201: 1600 * time.Microsecond, // 1 sample, 1 CPU's count within a period of it
		202: 300 * time.Microsecond,  // no sample: less than a period
	} {
		if th := tg.departed[tid]; th == nil {
			t.Errorf("thread %d not listed", tid)
		} else if th.lastCPU != want {
			t.Errorf("thread %d: %v of CPU time, want %v", tid, th.lastCPU, want)
		}
	}
}

// TestLaunchWithDescendantRings: a C command (no process rings: its own
// threads get rings of their own) whose 30 children burn 20 ms each has
// descendant rings: each child's thread is listed departed, as its own
// process, with its samples (in child_burn, its process's own) and a CPU
// time of at least its samples' periods, or the kernel's count at its exit
// where the kernel wrote one (it writes none for a task that holds the
// command's own events when it exits, which the kernel's swap of the
// contexts of a parent and child on one CPU makes happen); the command's
// own samples stay with its thread's own ring.
func TestLaunchWithDescendantRings(t *testing.T) {
	bin, l := launchForker(t, "30", "20", "2")
	if l.processRings() != nil || l.descendantRings() == nil || !l.SamplesDescendants() {
		t.Fatalf("process rings %v, descendant rings %v: want descendant rings only", l.processRings() != nil, l.descendantRings() != nil)
	}
	burnLo, burnHi := funcRange(t, bin, "child_burn")
	caps := make([]*target.Capture, 8)
	for i := range caps {
		caps[i] = target.NewCapture(128, 0)
	}
	cpu := map[int]time.Duration{} // by child
	samples := map[int]int{}
	var inBurn, total int
	testprog.PollEvery(60*time.Second, 100*time.Millisecond, func() bool { // until the command exited
		tids, err := l.Threads(nil)
		if err != nil && !errors.Is(err, target.ErrExited) {
			t.Fatal(err)
		}
		for _, tid := range tids {
			info, ierr := l.Info(tid)
			if ierr != nil || info.PID == 0 {
				continue // the command's own
			}
			cpu[info.PID] = max(cpu[info.PID], info.CPUTime)
			for {
				n, derr := l.DrainSamples(tid, caps)
				if derr != nil {
					t.Fatalf("drain thread %d: %v", tid, derr)
				}
				for _, c := range caps[:n] {
					total++
					samples[c.PID]++
					if c.PID != info.PID || c.PID == l.PID() {
						t.Errorf("a sample of process %d drained as thread %d of process %d", c.PID, tid, info.PID)
					}
					// The command is position-independent: an
					// address is found in it by file offset (its
					// text's offsets are its link-time addresses).
					for i, pc := range c.PCs {
						if i > 0 {
							pc-- // a return address: within its call
						}
						if im := c.Images.Lookup(pc); im != nil && filepath.Base(im.Path) == filepath.Base(bin) && im.FileOffset(pc) >= burnLo && im.FileOffset(pc) < burnHi {
							inBurn++
							break
						}
					}
				}
				if n < len(caps) {
					break
				}
			}
		}
		return err != nil
	})
	short, counted := 0, 0
	for pid, d := range cpu {
		if d < time.Duration(samples[pid])*time.Millisecond || d < 15*time.Millisecond {
			short++
			t.Logf("child %d: %v, %d samples", pid, d, samples[pid])
		}
		if d%time.Millisecond != 0 {
			counted++ // by the kernel, not in periods
		}
	}
	t.Logf("%d children, %d with the kernel's count at exit, %d samples (%d in child_burn)", len(cpu), counted, total, inBurn)
	if len(cpu) != 30 || short > 0 {
		t.Errorf("%d children listed, %d with less CPU time than their samples or 15 ms of the 20 each burnt: want 30, none", len(cpu), short)
	}
	if counted == 0 {
		t.Errorf("no child with the kernel's count of its CPU time at its exit")
	}
	if total < 30*20*9/10 || inBurn < total/2 {
		t.Errorf("%d samples, %d in child_burn: want 90%% of 600 ms at 1 ms, most in child_burn", total, inBurn)
	}
}

// stackRecord is a PERF_RECORD_SAMPLE of descendant rings with stack copies
// (TID, TIME, REGS_USER, STACK_USER) at time 0: the registers of
// perfRegsMask (frame pointer, stack pointer, PC) and the copy of the stack
// from sp.
func stackRecord(pid, tid uint32, fp, sp, pc uint64, stack []byte) []byte {
	le := binary.LittleEndian
	rec := make([]byte, 8, 8+8+8+8+8*perfRegCount+8+len(stack)+8)
	le.PutUint32(rec[0:], unix.PERF_RECORD_SAMPLE)
	rec = le.AppendUint32(rec, pid)
	rec = le.AppendUint32(rec, tid)
	rec = le.AppendUint64(rec, 0)
	rec = le.AppendUint64(rec, unix.PERF_SAMPLE_REGS_ABI_64)
	regs := map[uint64]uint64{0: fp, 1: sp, 2: pc} // perfRegs's order
	for i := range uint64(perfRegCount) {
		rec = le.AppendUint64(rec, regs[i])
	}
	rec = le.AppendUint64(rec, uint64(len(stack)))
	rec = append(rec, stack...)
	rec = le.AppendUint64(rec, uint64(len(stack)))
	le.PutUint16(rec[6:], uint16(len(rec)))
	return rec
}

// framedStack is a stack copy at sp holding two frame records, the second
// ending the chain: callers at 0x2000 and 0x3000.
func framedStack(sp uint64) (fp uint64, stack []byte) {
	le := binary.LittleEndian
	stack = make([]byte, 64)
	le.PutUint64(stack[16:], sp+32) // the first record: next record, return address
	le.PutUint64(stack[24:], 0x2000)
	le.PutUint64(stack[32:], 0) // the last
	le.PutUint64(stack[40:], 0x3000)
	return sp + 16, stack
}

// newFakeStackRings is descendant rings of process pid with stack copies
// of 64 bytes, walked by frame records (no image version is known).
func newFakeStackRings(t *testing.T, pid int, rings ...*perfRing) *processRings {
	p := newFakeProcessRings(pid, rings...)
	p.kidsOnly, p.exits, p.stack, p.ends = true, map[uint32]threadExit{}, 64, make([]uint64, len(rings))
	p.maxFrames, p.rec = 8, make([]byte, perfSampleMaxBytes(64))
	w, err := newWalker(target.Options{MaxFrames: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.walker = w
	return p
}

// TestDescendantStackRingsWalk: descendant rings with stack copies walk
// each child's sample from its copy (here by frame records), drop the
// command's own, skip a sample without user registers or with a copy
// longer than its record, and hand each thread its walks, in order.
func TestDescendantStackRingsWalk(t *testing.T) {
	const sp = 0x7fff0000
	r := fakeRing(4096)
	p := newFakeStackRings(t, 100, r)
	fp, stack := framedStack(sp)
	r.write(stackRecord(100, 100, fp, sp, 0x1000, stack)) // the command's own
	r.write(stackRecord(200, 200, fp, sp, 0x1100, stack))
	bad := stackRecord(200, 200, fp, sp, 0x1200, stack)
	binary.LittleEndian.PutUint64(bad[32+8*perfRegCount:], 1<<20) // a copy larger than the record
	r.write(bad)
	noRegs := stackRecord(200, 200, fp, sp, 0x1300, stack)
	binary.LittleEndian.PutUint64(noRegs[24:], unix.PERF_SAMPLE_REGS_ABI_NONE)
	noRegs = slices.Delete(noRegs, 32, 32+8*perfRegCount)
	binary.LittleEndian.PutUint16(noRegs[6:], uint16(len(noRegs)))
	r.write(noRegs)
	r.write(stackRecord(200, 201, fp, sp, 0x1400, stack))
	p.collect()
	if got := takeAll(p, 100); len(got) != 0 {
		t.Errorf("the command's own samples kept: %x", got)
	}
	want := [][]uint64{{0x1100, 0x2000, 0x3000}}
	if got := takeAll(p, 200); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("thread 200: %x, want %x", got, want)
	}
	want = [][]uint64{{0x1400, 0x2000, 0x3000}}
	if got := takeAll(p, 201); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("thread 201: %x, want %x", got, want)
	}
	if r.meta.Data_tail != r.meta.Data_head {
		t.Errorf("the ring is not freed: tail %d, head %d", r.meta.Data_tail, r.meta.Data_head)
	}
}

// TestDescendantStackRingsDoNotAllocate: reading and walking a drain's
// stack copies and handing them out allocates nothing in steady state.
func TestDescendantStackRingsDoNotAllocate(t *testing.T) {
	const sp = 0x7fff0000
	r := fakeRing(4096)
	p := newFakeStackRings(t, 100, r)
	fp, stack := framedStack(sp)
	recs := [][]byte{stackRecord(200, 201, fp, sp, 0x1000, stack), stackRecord(200, 202, fp, sp, 0x1100, stack), stackRecord(100, 100, fp, sp, 0x1200, stack)}
	caps := []*target.Capture{target.NewCapture(8, 0), target.NewCapture(8, 0)}
	allocs := testing.AllocsPerRun(100, func() {
		for _, rec := range recs {
			r.write(rec)
		}
		p.collect()
		for p.take(201, caps) == len(caps) {
		}
		for p.take(202, caps) == len(caps) {
		}
	})
	if allocs != 0 {
		t.Errorf("collect and take: %v allocations a drain, want 0", allocs)
	}
}

// FuzzDescendantStackCollect: whatever bytes a ring of stack copies holds
// (the children decide their stacks and registers), collect and take
// neither panic nor hand out more frames than maxFrames a sample.
func FuzzDescendantStackCollect(f *testing.F) {
	fp, stack := framedStack(0x7fff0000)
	f.Add(stackRecord(200, 201, fp, 0x7fff0000, 0x1000, stack))
	f.Add(append(stackRecord(200, 201, 0x10, 0x7fff0000, 0x1000, stack), stackRecord(100, 100, fp, 8, 0, nil)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := fakeRing(1024)
		p := newFakeStackRings(t, 100, r)
		r.write(data[:min(len(data), 1024)])
		p.collect()
		for _, s := range p.samples {
			if int(s.n) > p.maxFrames || int(s.off+s.n) > len(p.pcs) {
				t.Fatalf("a sample of %d frames at %d of %d, maxFrames %d", s.n, s.off, len(p.pcs), p.maxFrames)
			}
		}
		for tid := range maps.Clone(p.heads) {
			takeAll(p, int(tid))
		}
	})
}

// TestProcessRingsHandOutOldestFirst: a thread that moved between CPUs has
// samples in both rings; its samples are handed out oldest first, and
// collecting them so allocates nothing in steady state.
func TestProcessRingsHandOutOldestFirst(t *testing.T) {
	r0, r1 := fakeRing(1024), fakeRing(1024)
	p := newFakeProcessRings(100, r0, r1)
	recs := [][]byte{processRecordAt(10, 100, 101, 1), processRecordAt(30, 100, 101, 3), processRecordAt(20, 100, 101, 2), processRecordAt(15, 100, 102, 9)}
	write := func() {
		r0.write(recs[0])
		r0.write(recs[1])
		r1.write(recs[2])
		r1.write(recs[3])
	}
	write()
	p.collect()
	if got, want := takeAll(p, 101), [][]uint64{{1}, {2}, {3}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("thread 101's samples: %x, want %x (by time)", got, want)
	}
	if got := takeAll(p, 102); len(got) != 1 {
		t.Errorf("thread 102's samples: %x, want one", got)
	}
	caps := []*target.Capture{target.NewCapture(8, 0), target.NewCapture(8, 0)}
	allocs := testing.AllocsPerRun(100, func() {
		write()
		p.collect()
		for p.take(101, caps) == len(caps) {
		}
		for p.take(102, caps) == len(caps) {
		}
	})
	if allocs != 0 {
		t.Errorf("collect and take: %v allocations a drain, want 0", allocs)
	}
}

// TestDescendantStackRingsUnderABudget: descendant rings refused for want
// of locked memory are opened smaller with smaller stack copies (down to
// perfStackBytes), so that each ring still holds as many samples.
func TestDescendantStackRingsUnderABudget(t *testing.T) {
	const budget = 600 << 10 // per ring, as a user's budget would refuse more
	old := mmapRing
	t.Cleanup(func() { mmapRing = old })
	mmapRing = func(fd, size int) ([]byte, error) {
		if size > budget {
			return nil, unix.EPERM
		}
		return old(fd, size)
	}
	p, err := openProcessRings(os.Getpid(), time.Millisecond.Nanoseconds(), 64, true, 2*perfStackBytes)
	if err != nil {
		t.Fatalf("descendant rings under a budget: %v", err)
	}
	defer p.close()
	for _, r := range p.rings {
		if len(r.data) > budget {
			t.Errorf("a ring of %d bytes, over the budget", len(r.data))
		}
	}
	if p.stack != perfStackBytes || len(p.rec) < perfSampleMaxBytes(p.stack) {
		t.Errorf("stack copies of %d bytes (record buffer %d) in rings of %d bytes, want %d", p.stack, len(p.rec), len(p.rings[0].data), perfStackBytes)
	}
}

// launchForker launches forker (N MS PAR) as launchWithDescendantRings
// does.
func launchForker(t *testing.T, args ...string) (bin string, l *Launched) {
	bin = testprog.BuildC(t, "forker.c")
	return bin, launchWithDescendantRings(t, append([]string{bin}, args...)...)
}

// TestDescendantRingsCountWhatTheKernelDropped: descendant rings left
// unread until they overflowed (the command's children had used 700 ms of
// CPU time, almost three times what two CPUs' rings of 16 KiB copies hold
// at 1 ms) report the samples the kernel said it dropped, in the context
// of the thread it wrote each record of them in: with the samples drained,
// they account for the CPU time of forker's 60 children of 20 ms each,
// which would otherwise vanish with their exits' records.
func TestDescendantRingsCountWhatTheKernelDropped(t *testing.T) {
	_, l := launchForker(t, "60", "20", "2")
	if l.descendantRings() == nil || l.descendantRings().stack == 0 {
		t.Fatal("want descendant rings with stack copies")
	}
	testprog.PollEvery(60*time.Second, 5*time.Millisecond, func() bool {
		ticks, ok := childrenCPUTicks(l.PID())
		return ticks >= 70 || !ok
	})
	caps := make([]*target.Capture, 8)
	for i := range caps {
		caps[i] = target.NewCapture(128, 0)
	}
	var samples, lost int64
	testprog.PollEvery(60*time.Second, 20*time.Millisecond, func() bool { // until the command exited
		tids, err := l.Threads(nil)
		if err != nil && !errors.Is(err, target.ErrExited) {
			t.Fatal(err)
		}
		for _, tid := range tids {
			for {
				n, derr := l.DrainSamples(tid, caps)
				if errors.Is(derr, target.ErrNotKernelSampled) {
					break
				}
				if derr != nil {
					t.Fatalf("drain thread %d: %v", tid, derr)
				}
				samples += int64(n)
				if n < len(caps) {
					break
				}
			}
			lost += l.LostSamples(tid)
		}
		return err != nil
	})
	t.Logf("%d samples, %d dropped by the kernel, for 1.2 s of children's CPU time at 1 ms", samples, lost)
	if lost == 0 {
		t.Fatal("no sample reported dropped, though the rings were left to overflow")
	}
	if got := samples + lost; got < 1200*9/10 {
		t.Errorf("%d samples and %d dropped: want 90%% of 1.2 s at 1 ms", samples, lost)
	}
}

// childrenCPUTicks returns the CPU time (clock ticks) of the children
// process pid waited for, the cutime and cstime of its stat line, and
// false once the process is gone.
func childrenCPUTicks(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// After the name: state is field 3, cutime 16 and cstime 17.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 15 {
		return 0, false
	}
	cu, _ := strconv.Atoi(f[13])
	cs, _ := strconv.Atoi(f[14])
	return cu + cs, true
}

// lostRecord is the kernel's PERF_RECORD_LOST of n records, written in the
// context of thread tid of process pid.
func lostRecord(pid, tid uint32, n uint64) []byte {
	le := binary.LittleEndian
	rec := make([]byte, 8, 48)
	le.PutUint32(rec[0:], unix.PERF_RECORD_LOST)
	rec = le.AppendUint64(rec, 7) // the event's id
	rec = le.AppendUint64(rec, n)
	rec = le.AppendUint32(rec, pid)
	rec = le.AppendUint32(rec, tid)
	rec = le.AppendUint64(rec, 0)
	le.PutUint16(rec[6:], uint16(len(rec)))
	return rec
}

// TestDescendantRingsListDroppedSamples: samples the kernel dropped are
// listed with the thread it wrote their record in the context of: a child
// with samples, one without (departed, with their periods as CPU time), and
// the command's own thread (whose own ring's drain reports them).
func TestDescendantRingsListDroppedSamples(t *testing.T) {
	const period = time.Millisecond
	r := fakeRing(1024)
	p := newFakeProcessRings(100, r)
	p.kidsOnly, p.exits = true, map[uint32]threadExit{}
	tg := &Target{pid: 100, opts: target.Options{Kernel: target.KernelSampling{Period: period}}, departed: map[int]*thread{}, tasks: &taskList{dir: -1},
		kernel: &kernelSampler{lost: map[int]int64{}}}
	r.write(processRecord(200, 201, 0x20))
	r.write(lostRecord(200, 201, 3))
	r.write(lostRecord(300, 301, 5))
	r.write(lostRecord(100, 100, 2))
	p.collect()
	tg.listDescendantThreads(p)
	if got, want := tg.kernel.ringLost, map[int]int64{201: 3, 301: 5, 100: 2}; !maps.Equal(got, want) {
		t.Errorf("dropped by thread: %v, want %v", got, want)
	}
	if th := tg.departed[201]; th == nil || th.lastCPU != 4*period {
		t.Errorf("thread 201 with a sample and 3 dropped: %+v, want 4 ms", th)
	}
	if th := tg.departed[301]; th == nil || th.proc != 300 || th.lastCPU != 5*period {
		t.Errorf("thread 301 with 5 dropped: %+v, want 5 ms of process 300", th)
	}
	if _, ok := tg.departed[100]; ok {
		t.Error("the command's own thread listed as a descendant's")
	}
	// Read once: the next collect lists none.
	p.collect()
	if got := p.threadsWithSamples(nil); len(got) != 0 {
		t.Errorf("after a second collect: %+v, want none", got)
	}
}
