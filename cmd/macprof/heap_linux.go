//go:build linux

package main

import (
	"os"
	"strings"
	"unsafe"
)

// hugePage is the size of a transparent huge page on amd64 and arm64 (4 KiB
// base pages).
const hugePage = 2 << 20

// heapProbeBytes is a block of 16 pages of 8 KiB: the Go page allocator
// places a block that large at the lowest free address, the heap's end,
// not in a P's page cache.
const heapProbeBytes = 128 << 10

// heapKept holds the blocks allocated only to steer where the heap's next
// allocations go (hugeHeap, hugeHeapAhead): never written, so never
// resident.
var heapKept [][]byte

// thpAllowed reports whether the heap may be given huge pages: not where
// GODEBUG has disablethp=1, which asks the Go runtime to keep its heap off
// them.
func thpAllowed() bool {
	return !strings.Contains(","+os.Getenv("GODEBUG")+",", ",disablethp=1,")
}

// heapEnd allocates and keeps a probe block at the heap's end and returns
// the address just past it.
func heapEnd() uintptr {
	probe := make([]byte, heapProbeBytes)
	heapKept = append(heapKept, probe)
	return addressOf(probe) + heapProbeBytes
}

// addressOf is the address of b's first byte.
func addressOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
