package sampler

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// spoolMemBytes is the region spoolMem maps: one huge page.
const spoolMemBytes = 2 << 20

// spoolMem maps spoolMemBytes of anonymous memory at a huge-page boundary,
// marked MADV_HUGEPAGE, or returns nil. The spool's first chunks live there
// (spool.firstChunks): they grow a page at a time as samples come, and on
// the virtual machines measured each 4 KiB page faulted in costs 10-40 us,
// which a recording spends while the profiled threads run; the region
// faults in at once. Outside the Go heap, it holds no pointers.
func spoolMem() []byte {
	// Twice the size, to find an aligned range in it.
	p, err := unix.MmapPtr(-1, 0, nil, 2*spoolMemBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil
	}
	skip := (spoolMemBytes - uintptr(p)%spoolMemBytes) % spoolMemBytes
	if skip > 0 {
		unix.MunmapPtr(p, skip)
	}
	if tail := spoolMemBytes - skip; tail > 0 {
		unix.MunmapPtr(unsafe.Add(p, skip+spoolMemBytes), tail)
	}
	mem := unsafe.Slice((*byte)(unsafe.Add(p, skip)), spoolMemBytes)
	// Without transparent huge pages the advice fails and the region
	// faults in 4 KiB pages, as the heap would.
	unix.Madvise(mem, unix.MADV_HUGEPAGE)
	return mem
}

// freeSpoolMem unmaps a region from spoolMem.
func freeSpoolMem(mem []byte) {
	unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem)))
}
