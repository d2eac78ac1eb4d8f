//go:build linux && (amd64 || arm64)

package record

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/unwind"
)

// TestRecordKeepsShortLivedChildren: 100 children of 20 ms of CPU each,
// two at a time, each far shorter than record's look for new children
// (100 ms), are profiled through the events they inherit, whichever way
// the command's own stacks are walked (--unwind fp: process rings; auto,
// the default: its threads' own rings, and descendant rings for its
// children): the profile holds at least 90% of the CPU time the command's
// tree used (its rusage), most of it on the children's stacks, their
// function is named on most samples, every child is in the profile under its own PID, and
// the summary gives that share. (Measured on a 2-core machine at load
// 25-45: auto 95-96%, fp 92-93%; before descendant rings, auto held 43-78%.)
func TestRecordKeepsShortLivedChildren(t *testing.T) {
	bin := testprog.BuildC(t, "forker.c")
	for _, m := range []unwind.Method{unwind.MethodAuto, unwind.MethodFP} {
		t.Run(m.String(), func(t *testing.T) {
			before, ok := childrenCPU()
			if !ok {
				t.Fatal("getrusage(RUSAGE_CHILDREN) failed")
			}
			const hz = 999
			stacks, summary := recordLaunched(t, hz, m, bin, "100", "20", "2")
			after, _ := childrenCPU()
			tree := after - before
			var n, burn, pseudo int64
			for _, s := range stacks {
				n += s.Count
				switch {
				case slices.Contains(s.Frames, "child_burn"):
					burn += s.Count
				case strings.HasPrefix(s.Frames[0], "[unsampled") || strings.HasPrefix(s.Frames[0], "[lost"):
					pseudo += s.Count
				}
			}
			held := time.Duration(n) * (time.Second / hz)
			t.Logf("profile %v (%d samples, %d in child_burn, %d unsampled or lost), the tree used %v\n%s", held, n, burn, pseudo, tree, summary)
			if tree < 1600*time.Millisecond {
				t.Fatalf("the command's tree used %v of CPU time, less than its children's 2 s: not the workload meant", tree)
			}
			if held < tree*9/10 {
				t.Errorf("the profile holds %v of the tree's %v (%.1f%%), want at least 90%%", held, tree, 100*float64(held)/float64(tree))
			}
			if pseudo > n/20 {
				t.Errorf("%d of %d samples unsampled or lost, want at most 5%%", pseudo, n)
			}
			if burn < n/2 {
				t.Errorf("%d of %d samples in child_burn, want most", burn, n)
			}
			if !strings.Contains(summary, "of CPU time the command and the children it waited for used") {
				t.Errorf("the summary does not give the tree's share:\n%s", summary)
			}
			if !strings.Contains(summary, "in 101 processes") {
				t.Errorf("want the command and its 100 children in the profile:\n%s", summary)
			}
		})
	}
}

// busyPython burns a second of CPU time in a Python function, with its
// interpreter's C stack several frames deep below Py_BytesMain.
const busyPython = `import time
def burn(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
end = time.process_time() + 1.0
while time.process_time() < end:
    burn(20000)
`

// TestRecordWalksChildWithoutFramePointers: a long-lived child built
// without frame pointers (python3 started by sh -c, as make starts
// compilers) is sampled through the events it inherits with stack copies,
// walked with its own unwind tables: at least 90% of the profile's samples
// reach the interpreter's main (Py_BytesMain), not [truncated];leaf.
// (Measured on a 2-core machine at load 55-115: 98%; with callchains for
// children, 0%.)
func TestRecordWalksChildWithoutFramePointers(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed: install it (apt-get install python3)")
	}
	// The interpreter itself, not a wrapper (pyenv's shim is a shell
	// script).
	out, err := exec.Command(py, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("%s: %v", py, err)
	}
	py = strings.TrimSpace(string(out))
	const hz = 999
	stacks, summary := recordLaunched(t, hz, unwind.MethodAuto, "/bin/sh", "-c", py+" -S -c '"+busyPython+"'")
	var n, whole, pseudo int64
	for _, s := range stacks {
		switch {
		case strings.HasPrefix(s.Frames[0], "[unsampled") || strings.HasPrefix(s.Frames[0], "[lost"):
			pseudo += s.Count
			continue
		case slices.Contains(s.Frames, "Py_BytesMain"):
			whole += s.Count
		}
		n += s.Count
	}
	t.Logf("%d samples, %d reaching Py_BytesMain, %d unsampled or lost\n%s", n, whole, pseudo, summary)
	if n < hz*8/10 {
		t.Fatalf("%d samples, want a second's worth at %d Hz: not the workload meant", n, hz)
	}
	if whole < n*9/10 {
		t.Errorf("%d of %d samples (%.1f%%) reach Py_BytesMain, want at least 90%%", whole, n, 100*float64(whole)/float64(n))
	}
}
