package ptrace

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
)

// TestCFIWalkFindsTheCallerOfARedZoneCFA: a kernel sample in redzone_spin,
// whose CFA is computed from a word below the stack pointer (out of the
// kernel's stack copy, as in OpenSSL's AVX2 SHA-256), is walked to alpha
// and main by scanning the copy for the return address (gdb's bt, which
// reads the red zone, names the same three), and so is a stop's.
func TestCFIWalkFindsTheCallerOfARedZoneCFA(t *testing.T) {
	bin, name := buildFixture(t, "redzone.c", "-O2", "-fomit-frame-pointer")
	p := testprog.Start(t, bin)
	tg, err := Attach(p.PID, target.Options{Continuous: true, KernelSamplePeriod: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if _, err := tg.Images(); err != nil {
		t.Fatal(err)
	}
	tid := target.ThreadID(p.PID)
	c := target.NewCapture(64, 64<<10)
	if err := captureStop(t, tg, tid, c); err != nil { // opens the ring
		t.Fatal(err)
	}
	want := []string{"redzone_spin", "alpha", "main"}
	scanned := 0
	for kernel, deadline := 0, time.Now().Add(10*time.Second); kernel < 20; time.Sleep(10 * time.Millisecond) {
		err := tg.Capture(tid, c)
		if errors.Is(err, ErrNoSample) || err == nil && c.Walk.CFIFrames == 0 {
			// No sample yet, or walked before the table was built.
			if time.Now().After(deadline) {
				t.Fatalf("%d kernel samples walked with tables in 10 s", kernel)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		kernel++
		got := names(c.PCs, name)
		if len(got) < 3 || !slices.Equal(got[:3], want) || slices.Contains(got[3:], "alpha") || slices.Contains(got[3:], "main") {
			t.Fatalf("kernel sample walk %v (%v, %d scanned); want %v, ...", got, c.Walk.Stop, c.Walk.ScannedFrames, want)
		}
		scanned += c.Walk.ScannedFrames
	}
	// The loop, where the CFA is in the red zone, is nearly all of the
	// time.
	if scanned < 10 {
		t.Errorf("%d of 20 kernel samples found their caller by a scan; want most", scanned)
	}
	if err := captureStop(t, tg, tid, c); err != nil {
		t.Fatal(err)
	}
	if got := names(c.PCs, name); len(got) < 3 || !slices.Equal(got[:3], want) {
		t.Errorf("stop walk %v (%v, %d scanned); want %v, ...", got, c.Walk.Stop, c.Walk.ScannedFrames, want)
	}
}
