//go:build linux && (amd64 || arm64)

package ptrace

import (
	"encoding/binary"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/sampler"
)

// sampleRecord builds a PERF_RECORD_SAMPLE as the kernel writes it for
// sample type TID|REGS_USER|STACK_USER.
func sampleRecord(tid uint32, regs []uint64, stack []byte, dyn uint64) []byte {
	le := binary.LittleEndian
	b := make([]byte, 8, 64+len(stack))
	b = le.AppendUint32(b, tid) // pid
	b = le.AppendUint32(b, tid)
	if regs == nil {
		b = le.AppendUint64(b, 0)
	} else {
		b = le.AppendUint64(b, 2)
		for _, r := range regs {
			b = le.AppendUint64(b, r)
		}
	}
	b = le.AppendUint64(b, uint64(len(stack)))
	b = append(b, stack...)
	if len(stack) > 0 {
		b = le.AppendUint64(b, dyn)
	}
	le.PutUint32(b[0:], 9) // PERF_RECORD_SAMPLE
	le.PutUint16(b[6:], uint16(len(b)))
	return b
}

func TestParsePerfSample(t *testing.T) {
	regs := make([]uint64, perfRegCount)
	for i := range regs {
		regs[i] = uint64(0x1000 * (i + 1))
	}
	stack := make([]byte, 64)
	for i := range stack {
		stack[i] = byte(i)
	}
	buf := make([]uint64, 8)
	var s perfSample
	rec := sampleRecord(42, regs, stack, 40)
	if err := parsePerfSample(rec, perfRegCount, buf, &s); err != nil {
		t.Fatal(err)
	}
	if got := rec[s.stackOff:][:s.stackLen]; s.tid != 42 || !slices.Equal(s.regs, regs) || !slices.Equal(got, stack[:40]) {
		t.Fatalf("parsed tid %d regs %x stack %d bytes; want 42, %x, the first 40 bytes (dyn_size)", s.tid, s.regs, len(got), regs)
	}
	// A kernel thread's sample has no user registers.
	if err := parsePerfSample(sampleRecord(7, nil, nil, 0), perfRegCount, buf, &s); err != nil || len(s.regs) != 0 {
		t.Fatalf("sample without registers: %v, %d registers", err, len(s.regs))
	}
	// Every truncation of a record is refused, never read past.
	rec = sampleRecord(42, regs, stack, 64)
	for n := 0; n < len(rec); n++ {
		cut := append([]byte(nil), rec[:n]...)
		if n >= 8 {
			binary.LittleEndian.PutUint16(cut[6:], uint16(n))
		}
		if err := parsePerfSample(cut, perfRegCount, buf, &s); err == nil {
			t.Fatalf("a record cut to %d of %d bytes parsed", n, len(rec))
		}
	}
}

func FuzzParsePerfSample(f *testing.F) {
	regs := make([]uint64, perfRegCount)
	f.Add(sampleRecord(1, regs, make([]byte, 32), 32))
	f.Add(sampleRecord(1, nil, nil, 0))
	f.Add(sampleRecord(1, regs, make([]byte, 16), 1<<40))
	buf := make([]uint64, 8)
	f.Fuzz(func(t *testing.T, rec []byte) {
		var s perfSample
		if parsePerfSample(rec, perfRegCount, buf, &s) == nil {
			if s.stackOff < 0 || s.stackLen < 0 || s.stackOff+s.stackLen > len(rec) || len(s.regs) > perfRegCount {
				t.Fatalf("parsed %d stack bytes at %d and %d registers from a %d-byte record", s.stackLen, s.stackOff, len(s.regs), len(rec))
			}
		}
	})
}

// kernelCapture captures tid from a kernel sample: the first capture of a
// thread stops it (its ring has no sample yet), later ones read the ring.
func kernelCapture(t *testing.T, tg *Target, tid int, c *sampler.Capture) {
	t.Helper()
	if err := tg.Capture(sampler.ThreadID(tid), c); err != nil || c.Stopped == 0 {
		t.Fatalf("first capture: %v, stopped %v; want a stop", err, c.Stopped)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := tg.Capture(sampler.ThreadID(tid), c)
		if err == nil {
			if c.Stopped != 0 {
				t.Fatalf("a capture after the first stopped the thread for %v", c.Stopped)
			}
			return
		}
		if !errors.Is(err, ErrNoSample) || time.Now().After(deadline) {
			t.Fatalf("capture from kernel samples: %v (ring error: %v)", err, tg.KernelSampleError())
		}
	}
}

func TestKernelSampleCaptureMatchesAStop(t *testing.T) {
	opts := sampler.TargetOptions{Continuous: true, KernelSamplePeriod: 10 * time.Millisecond}
	_, tg := startDeep(t, opts, "1", "12")
	tids, err := tg.Threads(nil)
	if err != nil {
		t.Fatal(err)
	}
	tid := int(tids[len(tids)-1]) // the spinning thread
	k := sampler.NewCapture(512, 64<<10)
	kernelCapture(t, tg, tid, k)
	if k.Stopped != 0 {
		t.Errorf("a capture from a kernel sample reports the thread stopped for %v", k.Stopped)
	}
	// The same thread stopped: spinning in the same leaf, it has the same
	// callers (return addresses), frame for frame.
	s := sampler.NewCapture(512, 64<<10)
	runtime.LockOSThread() // every ptrace request of a capture from one thread, as Capture does
	tg.hotMu.Lock()
	err = tg.captureTransient(tid, s)
	tg.hotMu.Unlock()
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatal(err)
	}
	if len(k.PCs) < 14 || !slices.Equal(k.PCs[1:], s.PCs[1:]) {
		t.Fatalf("kernel sample walk %x\nstopped walk       %x\nwant the same callers, at least 14 frames", k.PCs, s.PCs)
	}
	if k.Walk.Stop.Truncated() != s.Walk.Stop.Truncated() {
		t.Errorf("kernel sample walk ended %v, stopped walk %v", k.Walk.Stop, s.Walk.Stop)
	}
}

func TestKernelSampleCaptureDoesNotAllocate(t *testing.T) {
	opts := sampler.TargetOptions{Continuous: true, KernelSamplePeriod: time.Millisecond}
	_, tg := startDeep(t, opts, "1", "5")
	tids, _ := tg.Threads(nil)
	tid := int(tids[len(tids)-1])
	c := sampler.NewCapture(512, 64<<10)
	kernelCapture(t, tg, tid, c)
	ids := []sampler.ThreadID{sampler.ThreadID(tid)}
	caps := []*sampler.Capture{c}
	errs := make([]error, 1)
	sampled := 0
	allocs := testing.AllocsPerRun(50, func() {
		time.Sleep(3 * time.Millisecond) // a few samples' worth of CPU time, if the thread ran
		tg.CaptureBatch(ids, caps, errs)
		switch {
		case errs[0] == nil:
			sampled++
		case !errors.Is(errs[0], ErrNoSample): // on a loaded machine the thread may not have run
			t.Fatal(errs[0])
		}
	})
	if sampled == 0 {
		t.Fatal("no capture found a kernel sample")
	}
	if allocs != 0 {
		t.Errorf("capture from a kernel sample: %.1f allocations, want 0", allocs)
	}
}

func TestKernelSampleRefusedFallsBackToStops(t *testing.T) {
	opts := sampler.TargetOptions{Continuous: true, KernelSamplePeriod: 10 * time.Millisecond}
	_, tg := startDeep(t, opts, "1", "5")
	refused := errors.New("perf_event_open: permission denied (test)")
	tg.openRing = func(int, time.Duration) (*perfRing, error) { return nil, refused }
	tids, _ := tg.Threads(nil)
	tid := sampler.ThreadID(tids[len(tids)-1])
	c := sampler.NewCapture(512, 64<<10)
	for i := 0; i < 2; i++ {
		if err := tg.Capture(tid, c); err != nil {
			t.Fatalf("capture %d with kernel samples refused: %v", i, err)
		}
		if c.Stopped == 0 || len(c.PCs) < 7 {
			t.Fatalf("capture %d: stopped %v, %d frames; want a stop and the whole stack", i, c.Stopped, len(c.PCs))
		}
	}
	if err := tg.KernelSampleError(); !errors.Is(err, refused) {
		t.Errorf("KernelSampleError() = %v, want the refusal", err)
	}
}
