//go:build linux

package main

import (
	"runtime"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// symbolizeHeapBytes is how much heap hugeHeap prepares: more than a
// symbolization of 100,000 addresses of node (190,000 symbols) touches
// without a collection (peak RSS 93 MB; ~650 more faults of 4 KiB pages
// for each 2 MiB past the block).
const symbolizeHeapBytes = 128 << 20

// hugeHeap lets the heap that `macprof symbolize` is about to fill fault
// in 2 MiB pages rather than 4 KiB ones where transparent huge pages are
// on request (the "madvise" setting): it maps symbolizeHeapBytes of heap
// (a block never touched), marks it MADV_HUGEPAGE and frees it for the
// allocations to come. A one-shot command's time went mostly to first
// touches of fresh heap (node: 6,600 page faults, then 1,400; a fifth
// less CPU on a VM where a fault costs tens of microseconds). Only speed
// depends on the allocator reusing the freed block first: where it does
// not, the collection is all it costs.
//
// The block starts at a 2 MiB boundary: blocks never written fill the
// heap up to it (the page allocator places a block of 16 pages or more at
// the lowest free address, the heap's end). Otherwise its head shared a
// 2 MiB range with pages the heap had used, which can only fault in 4 KiB
// pages, and was allocated first once freed (the Mach-O Go bench target:
// ~850 faults in all, then ~570). The collector stays off until the block
// is freed: one collection, not the two its size set off.
//
// It leaves the heap as it is where GODEBUG has disablethp=1, which asks
// the Go runtime to keep its heap off huge pages.
func hugeHeap() {
	if !thpAllowed() {
		return
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	end := heapEnd()
	if gap := (end+hugePage-1)&^(hugePage-1) - end; gap >= heapProbeBytes {
		heapKept = append(heapKept, make([]byte, gap))
	}
	b := make([]byte, symbolizeHeapBytes)
	start := addressOf(b)
	lo := int((start+hugePage-1)&^(hugePage-1) - start)
	hi := lo + (len(b)-lo)&^(hugePage-1)
	if hi > lo {
		unix.Madvise(b[lo:hi], unix.MADV_HUGEPAGE) // an error leaves 4 KiB pages
	}
	b = nil
	// The collection runs on one P: on two, runtime.GC's yields while
	// it waited for the sweep (runtime.gosched_m, a tenth of the
	// bench's Mach-O run) kept waking the idle P's thread. The other
	// P's page cache goes back to the heap as it goes, maybe below
	// the block: blocks never written fill those holes first.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for range 8 {
		hole := make([]byte, heapProbeBytes)
		heapKept = append(heapKept, hole)
		if addressOf(hole) > start {
			break
		}
	}
	runtime.GC() // b's pages go back to the heap
}
