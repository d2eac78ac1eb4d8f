//go:build linux && (amd64 || arm64)

package ptrace

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// launchWithDescendantRings launches args as record does a C program: its
// threads sampled through rings of their own, its descendants through
// descendant rings.
func launchWithDescendantRings(t *testing.T, args ...string) *Launched {
	t.Helper()
	opts := target.Options{Continuous: true, Unwind: unwind.MethodAuto, Kernel: target.KernelSampling{Period: time.Millisecond, ProcessRings: true}}
	l := launchForTest(t, args, opts)
	if l.processRings() != nil || l.descendantRings() == nil {
		t.Fatalf("launch %s: process rings %v, descendant rings %v; want descendant rings only", args[0], l.processRings() != nil, l.descendantRings() != nil)
	}
	if !l.descendantRings().filtered {
		t.Fatalf("launch %s: the descendant rings keep the command's own samples (no BPF filter: needs root and CONFIG_BPF_SYSCALL)", args[0])
	}
	return l
}

// workersNamed counts the threads of tids of process pid that the renamer
// named as workers (rn-w<i>).
func workersNamed(pid int, tids []target.ThreadID) int {
	n := 0
	for _, tid := range tids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/comm", pid, tid))
		if err == nil && strings.HasPrefix(string(b), "rn-w") {
			n++
		}
	}
	return n
}

// TestThreadsUnchangedFollowsTheKernelsRecords: after a listing, a
// command whose threads all have rings and only spin is reported unchanged (the
// descendant rings drop their samples and hold nothing), until its threads
// rename themselves (the kernel's comm records reach the rings through the
// events the threads inherited), and again after the next listing; a
// command that starts and ends threads all the time is reported changed
// within a second of a listing (fork and exit records).
func TestThreadsUnchangedFollowsTheKernelsRecords(t *testing.T) {
	l := launchWithDescendantRings(t, testprog.BuildC(t, "renamer.c"), "2")
	// Until its two workers run, named (each names itself as it
	// starts), and the listing reads what their starts left in the
	// rings. A thread without a ring of its own is captured by stops,
	// whose turning busy only a listing sees: until each has one (two
	// captures, as the sampler takes them), the threads may have changed.
	c := target.NewCapture(64, 0)
	testprog.WaitFor(t, 10*time.Second, func() bool {
		tids, err := l.Threads(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(tids) != 3 || workersNamed(l.PID(), tids) != 2 {
			return false
		}
		if l.ThreadsUnchanged() {
			return true
		}
		for _, tid := range tids {
			l.Capture(tid, c)
		}
		return false
	}, "the renamer's three threads listed, its workers named, each with a ring, and nothing new since")
	time.Sleep(50 * time.Millisecond)
	if !l.ThreadsUnchanged() {
		t.Fatal("spinning threads, nothing started or renamed: reported changed")
	}
	if err := l.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	testprog.WaitFor(t, 10*time.Second, func() bool { return !l.ThreadsUnchanged() }, "the renames reported")
	if _, err := l.Threads(nil); err != nil {
		t.Fatal(err)
	}
	if !l.ThreadsUnchanged() {
		t.Error("after the listing that read the renames: reported changed")
	}

	churn := launchWithDescendantRings(t, testprog.BuildC(t, "churn.c"), "2")
	changed := 0
	for range 5 {
		if _, err := churn.Threads(nil); err != nil {
			t.Fatal(err)
		}
		if testprog.Poll(time.Second, func() bool { return !churn.ThreadsUnchanged() }) {
			changed++
		}
	}
	if changed != 5 {
		t.Errorf("a command starting threads all the time: reported changed within a second of %d listings of 5", changed)
	}
}

// TestImagesUnchangedSeesADlopen: a command whose one thread has no ring of
// its own (nothing captured it) cannot be told unchanged as a whole
// (ThreadsUnchanged), but after a listing its images are told unchanged
// while it sorts, until it dlopens a library (the kernel's mmap record
// reaches the descendant rings), and again after the next listing: the
// sampler skips the ticks that would only look for such code.
func TestImagesUnchangedSeesADlopen(t *testing.T) {
	lib := testprog.BuildCShared(t, "hoplib.c", "libhopa.so", "-DHOP=hopa")
	l := launchWithDescendantRings(t, testprog.BuildC(t, "hopper.c"), "1", "1", lib)
	mapped := func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", l.PID()))
		return err == nil && strings.Contains(string(b), "libhopa.so")
	}
	list := func() {
		t.Helper()
		if _, err := l.Threads(nil); err != nil {
			t.Fatal(err)
		}
	}
	list()
	testprog.WaitFor(t, 10*time.Second, func() bool {
		list()
		return l.ImagesUnchanged() || mapped()
	}, "the sorting command's images told unchanged after a listing")
	if mapped() {
		t.Fatal("the library was mapped before a listing told the images unchanged: the sort phase is too short for this machine")
	}
	if l.ThreadsUnchanged() {
		t.Error("a thread without a ring of its own: the whole process told unchanged")
	}
	testprog.WaitFor(t, 10*time.Second, mapped, "hopper's dlopen of libhopa.so")
	testprog.WaitFor(t, 2*time.Second, func() bool { return !l.ImagesUnchanged() }, "the dlopen told as a change")
	list()
	testprog.WaitFor(t, 2*time.Second, l.ImagesUnchanged, "the images told unchanged after the listing that read the dlopen")
}

// TestWatchedEmptyDescendantRingsHoldNoDrain: descendant rings woken at
// half full (Options.Kernel.SamplesWaiting) hold the drain interval to
// their fill time only while they hold records or a collect read samples
// lately; empty, the wake-up comes before they fill. A ring not watched
// (its watch refused) holds it as before.
func TestWatchedEmptyDescendantRingsHoldNoDrain(t *testing.T) {
	tg := &Target{kernel: &kernelSampler{}, threads: map[int]*thread{}}
	tg.opts.Kernel.Period = time.Second / 999
	tg.opts.Kernel.MaxDrainInterval = time.Second
	const stack = 16 << 10
	watched := func() *perfRing {
		r := fakeRing(2 << 20)
		r.stopWatch = func() {}
		return r
	}
	kids := &processRings{stack: stack, rings: []*perfRing{watched(), watched()}}
	tg.kernel.kids = kids
	fill := time.Duration((2<<20)/perfSampleMaxBytes(stack)-perfRingSlack) * tg.opts.Kernel.Period
	long := tg.drainInterval(maxChainPeriods)
	if d := tg.DrainInterval(); d != long {
		t.Fatalf("empty watched descendant rings: %v, want %v (nothing else to drain)", d, long)
	}
	kids.rings[1].write(make([]byte, 64))
	if d := tg.DrainInterval(); d != fill/2 {
		t.Fatalf("a watched descendant ring with a record: %v, want %v (half what it holds)", d, fill/2)
	}
	kids.rings[1] = watched()
	kids.sampledAt.Store(time.Now().Add(-busyRingHold / 2).UnixNano())
	if d := tg.DrainInterval(); d != fill/2 {
		t.Fatalf("empty watched descendant rings sampled %v ago: %v, want %v (half what one holds)", busyRingHold/2, d, fill/2)
	}
	kids.sampledAt.Store(0)
	kids.rings[0] = fakeRing(2 << 20)
	if d := tg.DrainInterval(); d != fill {
		t.Fatalf("an empty descendant ring not watched: %v, want %v (what it holds)", d, fill)
	}
}

// TestDescendantRingsWakeTheSampler: with Options.Kernel.SamplesWaiting,
// record's, each descendant ring is watched, and a child that spins fills
// one to half and calls SamplesWaiting without any listing of the threads.
func TestDescendantRingsWakeTheSampler(t *testing.T) {
	var wakes atomic.Int32
	opts := target.Options{Continuous: true, Unwind: unwind.MethodAuto, Kernel: target.KernelSampling{Period: time.Millisecond, ProcessRings: true, SamplesWaiting: func() { wakes.Add(1) }}}
	// A child that spins for a second or two, and ends on its own.
	l := launchForTest(t, []string{"/bin/sh", "-c", "n=0; (while [ $n -lt 2000000 ]; do n=$((n+1)); done) >/dev/null 2>&1 </dev/null & wait"}, opts)
	p := l.descendantRings()
	if p == nil {
		t.Fatal("no descendant rings")
	}
	p.mu.Lock()
	for i, r := range p.rings {
		if r.stopWatch == nil {
			t.Errorf("descendant ring %d of %d not watched", i, len(p.rings))
		}
	}
	p.mu.Unlock()
	// Half a 2 MiB ring of 16 KiB copies is 62 samples: 62 ms of the
	// child's CPU.
	testprog.WaitFor(t, 10*time.Second, func() bool { return wakes.Load() > 0 }, "a wake-up from a descendant ring half full")
}
