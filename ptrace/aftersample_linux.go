package ptrace

import "errors"

// afterSample reads a sampled thread's memory as it is now, for the walk of
// its stack past the kernel's copy (unwind.Stack.After). A walk reads word
// by word, upward, and the code before each return address: one
// process_vm_readv per 4 KiB block, two blocks kept (the stack's, the
// code's), forgotten before each walk so that a walk never sees memory
// read before it began. Not safe for concurrent use: the kernel sampler's
// walks take turns.
type afterSample struct {
	mem    memReader
	blocks [2]afterBlock
	next   int // the block the next miss fills
}

// afterBlockSize is the bytes one read brings, aligned to their size.
const afterBlockSize = 4096

// afterBlock is the bytes read at base: n of them.
type afterBlock struct {
	base uint64
	n    int
	buf  [afterBlockSize]byte
}

// forWalk forgets what was read and returns a for the next walk of a
// thread of process pid.
func (a *afterSample) forWalk(pid int) *afterSample {
	a.mem.pid = pid
	a.blocks[0].n, a.blocks[1].n = 0, 0
	return a
}

// ReadMemory fills dst from addr, from a block read in this walk or by
// reading the block that holds addr.
func (a *afterSample) ReadMemory(addr uint64, dst []byte) error {
	for i := range a.blocks {
		if a.blocks[i].copyOut(addr, dst) {
			return nil
		}
	}
	if len(dst) > afterBlockSize/2 {
		return a.mem.ReadMemory(addr, dst)
	}
	b := &a.blocks[a.next]
	a.next ^= 1
	b.base, b.n = addr&^(afterBlockSize-1), 0
	if addr+uint64(len(dst)) > b.base+afterBlockSize {
		b.base = addr // across the aligned block's end
	}
	n, err := a.mem.readSome(b.base, b.buf[:])
	if err != nil {
		return err
	}
	if b.n = n; b.copyOut(addr, dst) {
		return nil
	}
	return errShortRead // unmapped from a page on
}

// errShortRead: the memory after an address is not all mapped.
var errShortRead = errors.New("memory not mapped to the end of the read")

// copyOut fills dst from the block if it holds all of [addr, addr+len(dst)).
func (b *afterBlock) copyOut(addr uint64, dst []byte) bool {
	off := addr - b.base
	if addr < b.base || off > uint64(b.n) || uint64(b.n)-off < uint64(len(dst)) {
		return false
	}
	copy(dst, b.buf[off:])
	return true
}
