//go:build linux && (amd64 || arm64)

package ptrace

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestProcessVMPagesFollowsMappings: a mapping added grows the figure
// Images looks at before it re-reads the memory map, and one removed
// shrinks it back.
func TestProcessVMPagesFollowsMappings(t *testing.T) {
	const size = 64 << 20
	pages := uint64(size / os.Getpagesize())
	before := processVMPages(os.Getpid())
	if before == 0 {
		t.Fatal("no size read for this process")
	}
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	mapped := processVMPages(os.Getpid())
	unix.Munmap(mem)
	after := processVMPages(os.Getpid())
	// (The runtime may map or unmap a little meanwhile.)
	if mapped < before+pages*9/10 || after > mapped-pages*9/10 {
		t.Fatalf("pages %d, %d with %d more mapped, %d after: want the mapping's %d seen", before, mapped, size, after, pages)
	}
	if got := processVMPages(1 << 30); got != 0 {
		t.Fatalf("a process that does not exist: %d pages, want 0", got)
	}
}
