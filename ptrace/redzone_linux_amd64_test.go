package ptrace

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
)

// TestCFIWalkFindsTheCallerOfARedZoneCFA: a kernel sample in redzone_spin,
// whose CFA is computed from a word below the stack pointer (out of the
// kernel's stack copy, as in OpenSSL's AVX2 SHA-256), is walked to alpha
// and main by scanning the copy for the return address (gdb's bt, which
// reads the red zone, names the same three), and so is a stop's.
func TestCFIWalkFindsTheCallerOfARedZoneCFA(t *testing.T) {
	bin, name := buildFixture(t, "redzone.c", "-O2", "-fomit-frame-pointer")
	_, tg, tid, c := startSampled(t, bin, 5*time.Millisecond)
	want := []string{"redzone_spin", "alpha", "main"}
	kernel, scanned := 0, 0
	if !testprog.Poll(10*time.Second, func() bool {
		if !newSample(t, tg, tid, c) || c.Walk.CFIFrames == 0 { // none yet, or walked before the table was built
			return false
		}
		kernel++
		got := names(c.PCs, name)
		if len(got) < 3 || !slices.Equal(got[:3], want) || slices.Contains(got[3:], "alpha") || slices.Contains(got[3:], "main") {
			t.Fatalf("kernel sample walk %v (%v, %d scanned); want %v, ...", got, c.Walk.Stop, c.Walk.ScannedFrames, want)
		}
		scanned += c.Walk.ScannedFrames
		return kernel == 20
	}) {
		t.Fatalf("%d kernel samples walked with tables in 10 s", kernel)
	}
	// The loop, where the CFA is in the red zone, is nearly all of the
	// time.
	if scanned < 10 {
		t.Errorf("%d of 20 kernel samples found their caller by a scan; want most", scanned)
	}
	// A stop (the ring left alone), once the table is built.
	runtime.LockOSThread() // every ptrace request of a capture from one thread, as Capture does
	tg.hotMu.Lock()
	err := tg.captureTransient(int(tid), c)
	tg.hotMu.Unlock()
	runtime.UnlockOSThread()
	if err != nil || c.Stopped == 0 {
		t.Fatalf("stop: %v, stopped %v", err, c.Stopped)
	}
	if got := names(c.PCs, name); len(got) < 3 || !slices.Equal(got[:3], want) {
		t.Errorf("stop walk %v (%v, %d scanned); want %v, ...", got, c.Walk.Stop, c.Walk.ScannedFrames, want)
	}
}
