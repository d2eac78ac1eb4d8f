//go:build linux && (amd64 || arm64)

package record

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/unwind"
)

// TestRecordKeepsShortLivedChildren: 300 children of 20 ms of CPU each,
// two at a time, each far shorter than record's look for new children
// (100 ms), are profiled through the events they inherit (process rings,
// --unwind fp): the profile holds at least 90% of the CPU time the
// command's tree used (its rusage), their function is named, and the
// summary gives that share.
func TestRecordKeepsShortLivedChildren(t *testing.T) {
	bin := testprog.BuildC(t, "forker.c")
	before, ok := childrenCPU()
	if !ok {
		t.Fatal("getrusage(RUSAGE_CHILDREN) failed")
	}
	const hz = 999
	stacks, summary := recordLaunched(t, hz, unwind.MethodFP, bin, "300", "20", "2")
	after, _ := childrenCPU()
	tree := after - before
	var n, burn int64
	for _, s := range stacks {
		n += s.Count
		if slices.Contains(s.Frames, "child_burn") {
			burn += s.Count
		}
	}
	held := time.Duration(n) * (time.Second / hz)
	t.Logf("profile %v (%d samples, %d in child_burn), the tree used %v\n%s", held, n, burn, tree, summary)
	if tree < 5*time.Second {
		t.Fatalf("the command's tree used %v of CPU time, less than its children's 6 s: not the workload meant", tree)
	}
	if held < tree*9/10 {
		t.Errorf("the profile holds %v of the tree's %v (%.1f%%), want at least 90%%", held, tree, 100*float64(held)/float64(tree))
	}
	if burn < n/2 {
		t.Errorf("%d of %d samples in child_burn, want most", burn, n)
	}
	if !strings.Contains(summary, "of CPU time the command and the children it waited for used") {
		t.Errorf("the summary does not give the tree's share:\n%s", summary)
	}
}
