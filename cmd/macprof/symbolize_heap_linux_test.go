//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"unsafe"
)

// TestSymbolizeHugeHeapFirstBlockInHugePage checks that the first large
// block allocated after hugeHeap (in a process of its own: a fresh heap,
// as symbolize's) lies in a mapping of 2 MiB pages: hugeHeap's block
// started at a 2 MiB boundary, so that its head, allocated first once
// freed, is not in 4 KiB pages.
func TestSymbolizeHugeHeapFirstBlockInHugePage(t *testing.T) {
	if os.Getenv("MACPROF_TEST_SYMBOLIZE_HEAP") == "1" {
		symbolizeHeapChild()
		return
	}
	out := hugePageChild(t, "TestSymbolizeHugeHeapFirstBlockInHugePage", "MACPROF_TEST_SYMBOLIZE_HEAP", "symbolize heap:")
	var huge int
	if _, err := fmt.Sscanf(out, "symbolize heap: %d KiB huge", &huge); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if huge < 2<<10 {
		t.Errorf("the first block after hugeHeap is not in a huge page: its mapping holds %d KiB of them", huge)
	}
}

// symbolizeHeapChild is the test's process: it writes a block allocated
// after hugeHeap and prints the huge pages of its mapping.
func symbolizeHeapChild() {
	hugeHeap()
	b := make([]byte, 256<<10)
	for i := range b {
		b[i] = 1
	}
	huge, err := smapsHugeKB(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Printf("symbolize heap: %d KiB huge\n", huge)
}

// hugePageChild runs test in a process of its own, with envVar=1 and env
// set, as a fresh heap's, and returns what it printed from prefix on; it
// skips where transparent huge pages are off, as the heaps that use them
// then do nothing.
func hugePageChild(t *testing.T, test, envVar, prefix string, env ...string) string {
	t.Helper()
	thp, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(thp), "[never]") {
		t.Skipf("transparent huge pages are off on this kernel (%q, %v): the huge-page heaps do nothing then", thp, err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), envVar+"=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	i := strings.Index(string(out), prefix)
	if i < 0 {
		t.Fatalf("the child printed no result:\n%s", out)
	}
	return string(out[i:])
}

// smapsHugeKB is the AnonHugePages of the mapping of /proc/self/smaps
// that holds addr.
func smapsHugeKB(addr uintptr) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	in := false
	s := bufio.NewScanner(f)
	for s.Scan() {
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(s.Text(), "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		var kb int
		if n, _ := fmt.Sscanf(s.Text(), "AnonHugePages: %d kB", &kb); n == 1 && in {
			return kb, nil
		}
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no mapping of /proc/self/smaps holds %#x", addr)
}

// TestSymbolizeHugeHeapKeepsProcs checks that hugeHeap, which turns the
// collector off and on around its collection, leaves GOMAXPROCS and the
// collector's setting as they were.
func TestSymbolizeHugeHeapKeepsProcs(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	// The setting as other tests of the package left it (record's runs
	// set their own).
	gc := debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	hugeHeap()
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS after hugeHeap: %d, want %d", got, procs)
	}
	if pct := debug.SetGCPercent(gc); pct != gc {
		t.Errorf("GC percent after hugeHeap: %d, want %d", pct, gc)
	}
}
