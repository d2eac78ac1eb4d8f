//go:build linux && (amd64 || arm64)

package ptrace

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/macprof/macprof/target"
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
