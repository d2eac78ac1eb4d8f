package ptrace

import (
	"bytes"
	"os"
	"testing"
	"unsafe"
)

// afterSample reads what a process holds at each address: from a block
// read in this walk, across a block's end, and again after forWalk; an
// unmapped address fails; no read allocates.
func TestAfterSampleReads(t *testing.T) {
	mem := make([]byte, 4*afterBlockSize)
	for i := range mem {
		mem[i] = byte(i * 7)
	}
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	var a afterSample
	r := a.forWalk(os.Getpid())
	dst := make([]byte, 8)
	for _, off := range []uint64{8, 16, afterBlockSize - 4, 2*afterBlockSize - 8, 100, afterBlockSize + 3, 3 * afterBlockSize} {
		if err := r.ReadMemory(base+off, dst); err != nil || !bytes.Equal(dst, mem[off:off+8]) {
			t.Fatalf("at +%#x: % x, %v; want % x", off, dst, err, mem[off:off+8])
		}
	}
	// What the process writes after a walk's read is seen by the next walk.
	if err := r.ReadMemory(base+24, dst); err != nil || !bytes.Equal(dst, mem[24:32]) {
		t.Fatalf("at +24: % x, %v; want % x", dst, err, mem[24:32])
	}
	mem[24] ^= 0xff
	if err := r.ReadMemory(base+24, dst); err != nil || dst[0] == mem[24] {
		t.Fatalf("the same walk read % x again: want the block it read", dst)
	}
	r = a.forWalk(os.Getpid())
	if err := r.ReadMemory(base+24, dst); err != nil || !bytes.Equal(dst, mem[24:32]) {
		t.Fatalf("the next walk read % x, %v; want % x", dst, err, mem[24:32])
	}
	if err := r.ReadMemory(8, dst); err == nil {
		t.Errorf("address 8 read without an error")
	}
	if n := testing.AllocsPerRun(100, func() {
		r := a.forWalk(os.Getpid())
		r.ReadMemory(base+afterBlockSize+64, dst)
		r.ReadMemory(base+2*afterBlockSize-4, dst)
	}); n != 0 {
		t.Errorf("%v allocations per walk", n)
	}
}
