//go:build !linux

package sampler

// spoolMem is Linux's region of huge pages for the spool's first chunks
// (spoolmem_linux.go); elsewhere they come from the heap.
func spoolMem() []byte { return nil }

func freeSpoolMem([]byte) {}
