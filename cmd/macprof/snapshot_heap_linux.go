//go:build linux

package main

import (
	"golang.org/x/sys/unix"
)

// heapChunk is how much heap the Go runtime maps at a time, at an address
// aligned to it (runtime.pallocChunkBytes).
const heapChunk = 4 << 20

// hugeHeapAhead makes the heap a snapshot fills from here on fault in one
// 2 MiB page rather than a few hundred 4 KiB ones, where transparent huge
// pages are given on request (the "madvise" setting): a first touch of a
// fresh page was the largest cost of a snapshot on a VM where a fault costs
// 18 us (idle 7 threads: ~490 faults, ~130 of them the snapshot's heap),
// and a huge page's fault costs about 12 of them. A partly used 2 MiB
// range can only fault in 4 KiB pages, so the heap's next allocations are
// moved to the next 2 MiB boundary: blocks never written fill the heap up
// to it (the page allocator places a block of 16 pages or more at the
// lowest free address, the heap's end) and use up this P's page cache,
// from which small spans come. The range is marked MADV_HUGEPAGE; one
// range only, so that peak RSS grows by 2 MiB at most. Where the heap is
// not laid out as expected the range holds used pages and only 4 KiB
// faults happen, as without it.
//
// It does nothing where GODEBUG has disablethp=1, which asks the Go
// runtime to keep its heap off huge pages. Call it with the collector
// off: the blocks are a few MiB of heap.
func hugeHeapAhead() {
	if !thpAllowed() {
		return
	}
	end := heapEnd()
	// The upper half of a 4 MiB chunk whose lower half ends the filler:
	// the heap is mapped a whole chunk at a time, so the range is
	// mapped (a range mapped later would be a new mapping, without the
	// advice).
	next := (end+heapProbeBytes-hugePage+heapChunk-1)&^(heapChunk-1) + hugePage
	heapKept = append(heapKept, make([]byte, next-end))
	// Before the blocks below, the last of which starts at next: one
	// the allocator clears (pages it counts as used before) would
	// otherwise fault the range's first pages in 4 KiB. An error leaves
	// 4 KiB pages.
	unix.Syscall(unix.SYS_MADVISE, next, hugePage, unix.MADV_HUGEPAGE)
	// A page cache holds 64 pages: nine 8-page blocks empty it, and
	// the next one it takes starts at next.
	for range 9 {
		b := make([]byte, 64<<10)
		heapKept = append(heapKept, b)
		if addressOf(b) >= next {
			break
		}
	}
}
