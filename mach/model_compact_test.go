package mach_test

import (
	"testing"
	"time"

	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/target"
)

// TestModelCompactUnwind samples the model task with the compact unwind
// walk on (Target.SetCompactUnwind): the first capture asks for the
// program's table, Images reads it from the task's memory, and the
// sampler's stacks through the real exporter are the expected ones. arm64
// only, with one thread: the model lays out a frame record for every
// frame but the interrupted one on that thread, which is what the
// fixture's compact rules say of arm64 code (leaf frameless, its caller
// in LR; every other function keeps a record). On x86_64 the model's
// generated stacks give the frameless leaf a frame record, which its rule
// (return address at SP) contradicts: TestModelCompactFramelessLeaf
// covers both architectures with the stacks the compact unwind fixture's
// own code lays out.
func TestModelCompactUnwind(t *testing.T) {
	mach.FreshUnwindTables(t.Cleanup)
	w := newWorld(t, "arm64", []chain{chainA, chainB})
	tg := w.attach(t, target.Options{Continuous: true})
	tg.SetCompactUnwind(true)
	if _, err := tg.Images(); err != nil {
		t.Fatal(err)
	}
	cu := tg.CompactUnwind()
	if cu == nil || cu.Built() != 0 {
		t.Fatalf("compact unwind set %v with %d tables before any capture", cu, cu.Built())
	}
	ids, err := tg.Threads(nil)
	if err != nil || len(ids) != 1 {
		t.Fatalf("Threads: %v, %v", ids, err)
	}
	c := target.NewCapture(64, 64<<10)
	if err := tg.Capture(ids[0], c); err != nil {
		t.Fatal(err)
	}
	// The capture walked by frame pointers and asked for the table;
	// Images builds it (the program has __unwind_info, libdemo was not
	// needed).
	if _, err := tg.Images(); err != nil {
		t.Fatal(err)
	}
	if got := tg.CompactUnwind().Built(); got != 1 {
		t.Fatalf("%d tables built after the first capture, want 1 (the program's)", got)
	}
	win := record(t, tg, 300*time.Millisecond)
	checkStacks(t, w, stacks(t, win), 2)
}
