package sampler

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// TestSpoolFirstChunksFaultInHugePages: the spool's first chunks of
// entries and tree nodes, and its table, lie in one region of a huge page
// (where transparent huge pages are not off), and a window whose samples
// outgrow them (more entries and nodes than a chunk holds, a table larger
// than its room) equals the window of the same samples interned at once.
func TestSpoolFirstChunksFaultInHugePages(t *testing.T) {
	const samples = 40_000 // each with a leaf of its own (40,003 nodes), and one again on its stack
	window := func(spoolBytes int) (*profile.Window, *spool) {
		s, err := New(Config{Hz: 100, MaxStacks: 1 << 20, SpoolBytes: spoolBytes})
		if err != nil {
			t.Fatal(err)
		}
		var w *profile.Window
		s.cfg.OnWindow = func(x *profile.Window) { w = x }
		start := time.Unix(1, 0)
		s.win = s.newWindow(start)
		ths := []*threadState{{name: "a"}, {name: "b"}}
		c := target.NewCapture(64, 0)
		for i := range samples {
			c.PCs = append(c.PCs[:0], 0x100000+uint64(i), 0x30, 0x20, 0x10)
			c.Walk = unwind.Result{Stop: unwind.StopEnd, Hash: unwind.HashPCs(c.PCs)}
			s.internAndCount(1, target.ThreadID(10+i%2), ths[i%2], c, 1)
			s.count(1, target.ThreadID(10+i%2), ths[i%2], ths[i%2].lastStack, 1)
			if i == 0 && s.spool != nil {
				checkHugeRegion(t, s.spool)
			}
		}
		sp := s.spool
		if sp != nil && (len(sp.entries) < 2 || len(sp.tree.pc) < 2 || len(sp.tree.table) <= len(sp.tree.tableMem)) {
			t.Fatalf("%d entry chunks, %d node chunks, a table of %d slots: the samples did not outgrow the first chunks", len(sp.entries), len(sp.tree.pc), len(sp.tree.table))
		}
		s.closeWindow(start.Add(time.Second))
		w.Stats = profile.Stats{}
		return w, sp
	}
	want, _ := window(0)
	got, sp := window(64 << 20)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the spooled window differs: got %d stacks, %d samples; want %d, %d", len(got.Stacks), len(got.Samples), len(want.Stacks), len(want.Samples))
	}
	// After the flush the first chunks are kept for the next samples.
	if len(sp.entries) != 1 || &sp.entries[0][:1][0] != &sp.first[:1][0] || len(sp.tree.pc) != 1 || &sp.tree.pc[0][0] != &sp.tree.firstPC[0] {
		t.Error("the flush did not keep the region's chunks")
	}
}

// checkHugeRegion checks that sp's first chunks lie in one spoolMem region
// and, where transparent huge pages are not off, that it faulted in as a
// huge page (/proc/self/smaps).
func checkHugeRegion(t *testing.T, sp *spool) {
	t.Helper()
	if sp.first == nil || sp.tree.firstPC == nil || sp.tree.tableMem == nil {
		t.Fatal("no region for the spool's first chunks")
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(sp.first[:1])))
	if base%spoolMemBytes != 0 || uintptr(unsafe.Pointer(&sp.tree.tableMem[len(sp.tree.tableMem)-1])) >= base+spoolMemBytes {
		t.Fatalf("region at %#x: not one aligned huge page", base)
	}
	thp, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		t.Fatalf("transparent huge pages: %v", err)
	}
	if strings.Contains(string(thp), "[never]") {
		t.Log("transparent huge pages are off: the region faults in 4 KiB pages")
		return
	}
	if kb := anonHugeKB(t, base); kb < spoolMemBytes>>10 {
		t.Errorf("the region at %#x holds %d kB of huge pages, want %d", base, kb, spoolMemBytes>>10)
	}
}

// anonHugeKB returns the AnonHugePages of the mapping of this process that
// holds addr, from /proc/self/smaps.
func anonHugeKB(t *testing.T, addr uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		var kb int
		if in {
			if n, _ := fmt.Sscanf(line, "AnonHugePages: %d kB", &kb); n == 1 {
				return kb
			}
		}
	}
	t.Fatalf("no mapping holds %#x in /proc/self/smaps", addr)
	return 0
}
