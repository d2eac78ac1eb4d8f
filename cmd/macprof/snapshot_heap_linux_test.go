package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSnapshotHeapAheadFaultsInHugePages checks that the small objects
// allocated after hugeHeapAhead lie in a 2 MiB page, in a process of its
// own as a snapshot's (a heap with holes left by earlier tests is not laid
// out as hugeHeapAhead expects) and with one P (another P's page cache may
// hold pages below the range, or take the range's first pages). Their page faults are logged: a handful,
// not one per 4 KiB, except under the race detector, whose shadow memory
// faults in 4 KiB pages.
func TestSnapshotHeapAheadFaultsInHugePages(t *testing.T) {
	if os.Getenv("MACPROF_TEST_HEAP_AHEAD") == "1" {
		heapAheadChild()
		return
	}
	// One P: the test's goroutines allocate from one page cache, as
	// the snapshot's main goroutine does until its first blocking call.
	out := hugePageChild(t, "TestSnapshotHeapAheadFaultsInHugePages", "MACPROF_TEST_HEAP_AHEAD", "heap ahead:", "GOMAXPROCS=1")
	var faults, n, huge int
	if _, err := fmt.Sscanf(out, "heap ahead: %d faults, %d KiB, %d KiB huge", &faults, &n, &huge); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Logf("%d page faults writing %d KiB of new objects; their mapping holds %d KiB of huge pages", faults, n, huge)
	if huge < hugePage>>10 {
		t.Errorf("the heap after hugeHeapAhead is not in a huge page: its mapping holds %d KiB of them", huge)
	}
}

// heapAheadChild is the test's process: it allocates after hugeHeapAhead,
// as a snapshot does, and prints what it saw.
func heapAheadChild() {
	debug.SetGCPercent(-1)
	runtime.LockOSThread()
	hugeHeapAhead()
	var before, after unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &before)
	const n = 96 // 96 objects of 4 KiB: 48 spans of 8 KiB from the page cache
	objs := make([][]byte, 0, n)
	for range n {
		b := make([]byte, 4096)
		for i := range b {
			b[i] = 1
		}
		objs = append(objs, b)
	}
	unix.Getrusage(unix.RUSAGE_THREAD, &after)
	huge, err := smapsHugeKB(addressOf(objs[n-1]))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Printf("heap ahead: %d faults, %d KiB, %d KiB huge\n", after.Minflt-before.Minflt, n*4, huge)
}
