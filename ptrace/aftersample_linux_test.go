package ptrace

import (
	"bytes"
	"os"
	"testing"
	"unsafe"
)

// afterSample reads what a process holds at each address, inside the stack
// it is given (in blocks) and outside (code lines): from what this walk
// read, across a block's or line's end, and afresh after forWalk; an
// unmapped address fails; no read allocates.
func TestAfterSampleReads(t *testing.T) {
	mem := make([]byte, 3*afterStackBlock)
	for i := range mem {
		mem[i] = byte(i * 7)
	}
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	var a afterSample
	dst := make([]byte, 8)
	for _, stack := range []bool{true, false} {
		lo, hi := base, base+uint64(len(mem))
		if !stack {
			lo, hi = 0, 1 // every address is code
		}
		r := a.forWalk(os.Getpid(), lo, hi)
		for _, off := range []uint64{8, 16, 60, 100, afterStackBlock - 4, afterStackBlock + 3, 2*afterStackBlock - 8, 64, 8, 3*afterStackBlock - 8} {
			if err := r.ReadMemory(base+off, dst); err != nil || !bytes.Equal(dst, mem[off:off+8]) {
				t.Fatalf("stack %v, at +%#x: % x, %v; want % x", stack, off, dst, err, mem[off:off+8])
			}
		}
		// What the process writes after a walk's read is seen by the
		// next walk, not by the same.
		if err := r.ReadMemory(base+24, dst); err != nil || !bytes.Equal(dst, mem[24:32]) {
			t.Fatalf("stack %v, at +24: % x, %v; want % x", stack, dst, err, mem[24:32])
		}
		mem[24] ^= 0xff
		if err := r.ReadMemory(base+24, dst); err != nil || dst[0] == mem[24] {
			t.Fatalf("stack %v: the same walk read % x again: want what it read before", stack, dst)
		}
		r = a.forWalk(os.Getpid(), lo, hi)
		if err := r.ReadMemory(base+24, dst); err != nil || !bytes.Equal(dst, mem[24:32]) {
			t.Fatalf("stack %v: the next walk read % x, %v; want % x", stack, dst, err, mem[24:32])
		}
		if err := r.ReadMemory(8, dst); err == nil {
			t.Errorf("stack %v: address 8 read without an error", stack)
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		r := a.forWalk(os.Getpid(), base, base+uint64(len(mem)))
		r.ReadMemory(base+afterStackBlock+64, dst)
		r.ReadMemory(base+2*afterStackBlock-4, dst)
	}); n != 0 {
		t.Errorf("%v allocations per walk", n)
	}
}
