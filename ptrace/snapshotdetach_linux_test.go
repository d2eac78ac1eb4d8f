//go:build linux && (amd64 || arm64)

package ptrace

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// TestCaptureAllAndDetachLeavesNothingTraced: after CaptureAllAndDetach
// every thread is captured and none is traced any more, before Close (which
// then has no thread to stop again), and the copies are walked to main
// and beyond (WalkCopies reads the running process, not a stopped one).
func TestCaptureAllAndDetachLeavesNothingTraced(t *testing.T) {
	p, tg := startDeep(t, target.Options{}, "3", "20")
	if _, err := tg.Images(); err != nil { // as a snapshot reads them first
		t.Fatal(err)
	}
	caps, err := tg.CaptureAllAndDetach(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(caps) != 4 {
		t.Fatalf("%d captures, want 4 (main thread and 3 workers)", len(caps))
	}
	for _, c := range caps {
		if c.Err != nil || len(c.Stack) == 0 {
			t.Errorf("thread %d: %d bytes of stack copied, %v", c.Thread, len(c.Stack), c.Err)
		}
	}
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(p.PID) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		if v, err := procStatusField(tid, "TracerPid"); err == nil && strings.TrimSpace(v) != "0" {
			t.Errorf("thread %d still traced by %s after CaptureAllAndDetach", tid, v)
		}
	}
	tg.WalkCopies(caps)
	for _, c := range caps {
		if len(c.PCs) < 3 {
			t.Errorf("thread %d: %d frames after WalkCopies", c.Thread, len(c.PCs))
		}
	}
	if err := tg.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestCaptureAllPacksCopies: CaptureAll puts each thread's stack copy and
// frames right after the previous thread's in one buffer, so that the
// pages it writes are those the copies fill (not one or two fresh pages a
// thread), and no capture's buffer reaches into the next one's; the walks
// of WalkCopies are packed the same way. A thread that did not stop in
// time (a loaded machine) holds no bytes, so the next one follows the one
// before it.
func TestCaptureAllPacksCopies(t *testing.T) {
	_, tg := startDeep(t, target.Options{}, "3", "20")
	if _, err := tg.Images(); err != nil {
		t.Fatal(err)
	}
	var caps []target.Capture
	captured := func() (ok []target.Capture) {
		for _, c := range caps {
			if c.Err == nil && len(c.Stack) > 0 {
				ok = append(ok, c)
			}
		}
		return ok
	}
	for try := 0; try < 10 && len(captured()) < 2; try++ {
		var err error
		if caps, err = tg.CaptureAll(nil); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		ok := captured()
		if len(ok) < 2 {
			t.Fatalf("%s: %d threads captured in 10 tries, want at least 2", when, len(ok))
		}
		for i := 1; i < len(ok); i++ {
			a, b := ok[i-1], ok[i]
			if cap(a.Stack) != len(a.Stack) || cap(a.PCs) != len(a.PCs) {
				t.Errorf("%s: capture of thread %d: capacity %d bytes, %d frames beyond its length %d, %d", when, a.Thread, cap(a.Stack), cap(a.PCs), len(a.Stack), len(a.PCs))
			}
			gap := uintptr(unsafe.Pointer(unsafe.SliceData(b.Stack))) - uintptr(unsafe.Pointer(unsafe.SliceData(a.Stack))) - uintptr(len(a.Stack))
			if gap >= 16 {
				t.Errorf("%s: stack copy of thread %d starts %d bytes after the end of thread %d's, want under 16", when, b.Thread, gap, a.Thread)
			}
			if len(a.PCs) == 0 {
				continue
			}
			gap = uintptr(unsafe.Pointer(unsafe.SliceData(b.PCs))) - uintptr(unsafe.Pointer(unsafe.SliceData(a.PCs))) - 8*uintptr(len(a.PCs))
			if gap >= 16*8 {
				t.Errorf("%s: frames of thread %d start %d bytes after the end of thread %d's, want under 128", when, b.Thread, gap, a.Thread)
			}
		}
	}
	check("CaptureAll")
	tg.WalkCopies(caps)
	check("WalkCopies")
}

// TestCaptureAllAndDetachWalksNothingDuringTheStop: with unwind tables,
// CaptureAllAndDetach's captures hold the registers, the copy and the PC
// alone (the threads are stopped only for the copy), and WalkCopies walks
// the copies; with frame pointers only, the walk during the stop is the
// only one and the captures hold it (deep's 3 workers, which keep frame
// pointers, walked 20 frames deep).
func TestCaptureAllAndDetachWalksNothingDuringTheStop(t *testing.T) {
	for _, tc := range []struct {
		name       string
		unwind     unwind.Method
		afterwards bool
	}{{"auto", unwind.MethodAuto, true}, {"fp", unwind.MethodFP, false}} {
		t.Run(tc.name, func(t *testing.T) {
			_, tg := startDeep(t, target.Options{Unwind: tc.unwind}, "3", "20")
			if _, err := tg.Images(); err != nil {
				t.Fatal(err)
			}
			caps, err := tg.CaptureAllAndDetach(nil)
			if err != nil {
				t.Fatal(err)
			}
			deep := 0
			for _, c := range caps {
				if c.Err != nil || len(c.Stack) == 0 {
					t.Errorf("thread %d: %d bytes of stack copied, %v", c.Thread, len(c.Stack), c.Err)
				}
				if tc.afterwards && (len(c.PCs) != 1 || c.PCs[0] != c.Regs.PC) {
					t.Errorf("thread %d: %d frames from the stop (%#x), want its PC %#x alone", c.Thread, len(c.PCs), c.PCs, c.Regs.PC)
				}
				if len(c.PCs) >= 20 {
					deep++
				}
			}
			if !tc.afterwards && deep < 3 {
				t.Errorf("%d threads walked 20 frames deep during the stop, want the 3 workers", deep)
			}
			tg.WalkCopies(caps)
			deep = 0
			for _, c := range caps {
				if len(c.PCs) >= 20 {
					deep++
				}
			}
			if deep < 3 {
				t.Errorf("%d threads walked 20 frames deep after WalkCopies, want the 3 workers", deep)
			}
			if err := tg.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}
