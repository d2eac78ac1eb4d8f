//go:build linux && (amd64 || arm64)

package ptrace

import (
	"fmt"
	"os"
	"os/exec"
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

// TestVMPagesFileKeepsOneDescriptor: Images's reads of the size go through
// one descriptor of /proc/PID/statm, opened once and read again from its
// start (not an open and close at every tick), follow mappings as reads
// by path do, and read nothing once the process has died.
func TestVMPagesFileKeepsOneDescriptor(t *testing.T) {
	const size = 64 << 20
	pages := uint64(size / os.Getpagesize())
	var f vmPagesFile
	defer f.close()
	before := f.pages(os.Getpid())
	if before == 0 || !f.opened {
		t.Fatalf("first read: %d pages, opened %v", before, f.opened)
	}
	fd := f.fd
	if link, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); err != nil || link != fmt.Sprintf("/proc/%d/statm", os.Getpid()) {
		t.Fatalf("descriptor %d is %q (%v), want this process's statm", fd, link, err)
	}
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	mapped := f.pages(os.Getpid())
	unix.Munmap(mem)
	after := f.pages(os.Getpid())
	if f.fd != fd {
		t.Fatalf("descriptor %d, then %d: want the first kept", fd, f.fd)
	}
	if mapped < before+pages*9/10 || after > mapped-pages*9/10 {
		t.Fatalf("pages %d, %d with %d more mapped, %d after: want the mapping's %d seen", before, mapped, size, after, pages)
	}

	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var child vmPagesFile
	defer child.close()
	if got := child.pages(cmd.Process.Pid); got == 0 {
		t.Fatal("no size read for a live child")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if got := child.pages(cmd.Process.Pid); got != 0 {
		t.Fatalf("a dead (reaped) child: %d pages, want 0", got)
	}
	child.close()
	if got := child.pages(1 << 30); got != 0 || child.opened {
		t.Fatalf("after close, a process that does not exist: %d pages, opened %v", got, child.opened)
	}
}
