//go:build linux && (amd64 || arm64)

package ptrace

import (
	"fmt"
	"os"
	"strings"
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
