//go:build linux

package main

import (
	"os"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// symbolizeHeapBytes is how much heap hugeHeap prepares: more than a
// symbolization of 100,000 addresses of node (190,000 symbols) touches.
const symbolizeHeapBytes = 32 << 20

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
// It leaves the heap as it is where GODEBUG has disablethp=1, which asks
// the Go runtime to keep its heap off huge pages.
func hugeHeap() {
	if strings.Contains(","+os.Getenv("GODEBUG")+",", ",disablethp=1,") {
		return
	}
	b := make([]byte, symbolizeHeapBytes)
	const huge = 2 << 20
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := int((start+huge-1)&^(huge-1) - start)
	hi := lo + (len(b)-lo)&^(huge-1)
	if hi > lo {
		unix.Madvise(b[lo:hi], unix.MADV_HUGEPAGE) // an error leaves 4 KiB pages
	}
	b = nil
	runtime.GC() // b's pages go back to the heap
}
