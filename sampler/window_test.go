package sampler

import (
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

func TestEvictedStacksStayInTheWindow(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*targettest.Thread{1: {Share: 1, Stack: []uint64{1, 2}, Stacks: 50}})
	ws := run(t, Config{Hz: 200, MaxStacks: 4}, 500*time.Millisecond, f)
	w := ws[0]
	var total int64
	for _, s := range w.Samples {
		total += s.Count
		if s.Stack < 0 || s.Stack >= len(w.Stacks) || len(w.Stacks[s.Stack].PCs) != 3 {
			t.Fatalf("sample points at a bad stack: %+v", s)
		}
	}
	// Each capture brings the next of 50 stacks; a loaded machine makes
	// fewer captures (each counting the periods it caught up on), so the
	// window holds one stack per capture, up to 50.
	distinct := min(50, int(w.Stats.Captures))
	if total < 80 || distinct < 8 || len(w.Stacks) < distinct || w.Missed[profile.MissStackEvicted] != 0 {
		t.Fatalf("%d samples over %d stacks in %d captures, missed %v: evicted stacks were lost", total, len(w.Stacks), w.Stats.Captures, w.Missed)
	}
}
