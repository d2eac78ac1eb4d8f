package ptrace

import "errors"

// afterSample reads a sampled thread's memory as it is now, for the walk of
// its stack past the kernel's copy (unwind.Stack.After). A walk reads its
// stack word by word, upward, and the code before each return address: the
// stack in blocks of 16 KiB from the first word asked (one process_vm_readv
// each), the code in 64-byte lines kept by address (a recursion returns to
// the same few addresses), all forgotten before each walk so that a walk
// never sees memory read before it began. Not safe for concurrent use: the
// kernel sampler's walks take turns.
type afterSample struct {
	mem    memReader
	lo, hi uint64 // the stack's mapping: reads inside go to stack
	// top is the end of the highest stack word this walk asked for: how
	// much copy the walk needed (growRing).
	top   uint64
	stack struct {
		base uint64
		n    int
		buf  [afterStackBlock]byte
	}
	code [afterCodeLines]struct {
		base uint64
		n    int
		buf  [afterCodeLine]byte
	}
}

// The sizes of afterSample's stack block and code lines, and the number of
// lines.
const (
	afterStackBlock = 16 << 10
	afterCodeLine   = 64
	afterCodeLines  = 16
)

// forWalk forgets what was read and returns a for the next walk of a
// thread of process pid whose stack is mapped at [lo, hi).
func (a *afterSample) forWalk(pid int, lo, hi uint64) *afterSample {
	a.mem.pid, a.lo, a.hi, a.top = pid, lo, hi, 0
	a.stack.n = 0
	for i := range a.code {
		a.code[i].n = 0
	}
	return a
}

// ReadMemory fills dst from addr, from what this walk read already or by
// reading the stack block or the code line that starts there.
func (a *afterSample) ReadMemory(addr uint64, dst []byte) error {
	n := uint64(len(dst))
	if addr >= a.lo && addr < a.hi {
		a.top = max(a.top, addr+n)
		s := &a.stack
		if !holds(s.base, s.n, addr, n) {
			// From addr up: the walk reads upward.
			s.base, s.n = addr, 0
			m, err := a.mem.readSome(addr, s.buf[:min(uint64(len(s.buf)), max(a.hi-addr, n))])
			if err != nil {
				return err
			}
			if s.n = m; !holds(s.base, s.n, addr, n) {
				return errShortRead
			}
		}
		copy(dst, s.buf[addr-s.base:])
		return nil
	}
	if n > afterCodeLine/2 {
		return a.mem.ReadMemory(addr, dst)
	}
	l := &a.code[addr/afterCodeLine%afterCodeLines]
	if !holds(l.base, l.n, addr, n) {
		l.base, l.n = addr&^(afterCodeLine-1), 0
		if addr+n > l.base+afterCodeLine {
			l.base = addr // across the aligned line's end
		}
		m, err := a.mem.readSome(l.base, l.buf[:])
		if err != nil {
			return err
		}
		if l.n = m; !holds(l.base, l.n, addr, n) {
			return errShortRead
		}
	}
	copy(dst, l.buf[addr-l.base:])
	return nil
}

// holds reports whether the n bytes read at base hold [addr, addr+size).
func holds(base uint64, n int, addr, size uint64) bool {
	off := addr - base
	return addr >= base && off <= uint64(n) && uint64(n)-off >= size
}

// errShortRead: the memory after an address is not all mapped.
var errShortRead = errors.New("memory not mapped to the end of the read")
