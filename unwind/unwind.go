// Package unwind turns a stopped thread's registers and stack copy into its
// return addresses (amd64, arm64), by frame-pointer chains (Walk) or by the
// rules of unwind tables (WalkCFI, over the Rule every table format of
// unwind/cfi and unwind/compact compiles to), without system calls or
// allocation so that it can run while the thread is stopped.
package unwind

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Arch names the instruction set whose frame records the walker decodes.
type Arch uint8

// The architectures the walker supports.
const (
	ArchUnknown Arch = iota
	ArchAMD64
	ArchARM64
)

// String returns the Go-style name of the architecture.
func (a Arch) String() string {
	switch a {
	case ArchAMD64:
		return "amd64"
	case ArchARM64:
		return "arm64"
	}
	return fmt.Sprintf("Arch(%d)", uint8(a))
}

// MemoryReader reads memory of the target. ReadMemory fills all of dst from
// addr or returns an error; it must not retain dst.
type MemoryReader interface {
	ReadMemory(addr uint64, dst []byte) error
}

// Regs holds the registers a frame-pointer walk starts from. LR is used on
// arm64 only (x30); FP is rbp on amd64 and x29 on arm64.
type Regs struct {
	PC, SP, FP, LR uint64
}

// Stack is a bulk copy of a thread's stack together with the bounds of the
// memory region that holds SP. Data holds the bytes that start at Base. Lo and
// Hi bound every frame record the walk accepts: a record outside [Lo, Hi) ends
// the walk. Bytes inside the bounds but outside Data are read through the
// walker's fallback reader, if it has one.
//
// After, when set and the walker has no fallback reader, reads the
// thread's memory as it is now, after the copy was taken (a kernel sample
// whose thread ran on): WalkCFI reads the words above the copy through it,
// up to AfterSampleSpan bytes past the copy's end, and accepts a frame found
// with them only where its return address follows a call instruction in
// code some table covers; such frames come after the AfterSampleMark.
//
// Chain, when set, is the kernel's walk of the same stack's frame records
// taken in the same sample (perf_event's user callchain: the PC, then the
// return address of each record from FP on), ChainCut telling that it
// stopped at the kernel's depth limit: WalkCFI takes the callers from it
// where the copy ends, if the walk is then at one of its records and the
// tables say the frames from there on keep theirs (splice.go).
type Stack struct {
	Base     uint64
	Data     []byte
	Lo, Hi   uint64
	After    MemoryReader
	Chain    []uint64
	ChainCut bool
}

// AfterSampleMark is the address WalkCFI puts between the frames it found
// in the stack copy and those it read after the sample (Stack.After), so
// that profiles can show where they begin. No code lies there: it is not
// a canonical amd64 address, nor a user address on arm64.
const AfterSampleMark uint64 = 0x8000_0000_0000_0001

// AfterSampleSpan bounds what a walk reads through Stack.After: the words
// up to this many bytes above the copy's end.
const AfterSampleSpan = 1 << 20

// Limits on the number of frames a walk returns.
const (
	DefaultMaxFrames = 512
	MaxMaxFrames     = 10000
)

// StopReason tells why a walk ended.
type StopReason uint8

// Reasons a walk ends. StopEnd is the normal end of a chain (a zero frame
// pointer or return address); every other reason marks a stack that may be
// truncated.
const (
	StopEnd           StopReason = iota // the chain ended with a zero frame pointer or return address
	StopMaxFrames                       // the frame limit was reached
	StopMisaligned                      // a frame pointer was not aligned
	StopOutOfStack                      // a frame record lay outside the stack region
	StopNotIncreasing                   // a record did not lie above the previous one (catches cycles and overlaps)
	StopReadFailed                      // memory outside the bulk copy could not be read
	StopNoRoom                          // the output slice had no capacity left
	StopUnsupported                     // an unwind-table rule the walker does not model (WalkCFI)
	StopNoFrameRecord                   // a frame keeps no frame record, in a walk of records taken elsewhere (CheckChain)
	StopBelowSP                         // the interrupted frame's CFA is kept below the stack pointer, which a stack copy does not hold, and no scan found its caller (WalkCFI)
	StopNotAfterCall                    // a return address read after the sample (Stack.After) does not follow a call instruction in known code (WalkCFI)
)

var stopReasonNames = [...]string{
	StopEnd:           "end of chain",
	StopMaxFrames:     "frame limit reached",
	StopMisaligned:    "misaligned frame pointer",
	StopOutOfStack:    "frame pointer outside the stack",
	StopNotIncreasing: "frame pointer not increasing",
	StopReadFailed:    "stack memory unreadable",
	StopNoRoom:        "output buffer full",
	StopUnsupported:   "unwind rule not supported",
	StopNoFrameRecord: "frame without a frame record",
	StopBelowSP:       "CFA below the stack pointer, outside the stack copy",
	StopNotAfterCall:  "return address read after the sample not after a call",
}

// String describes the reason in words.
func (r StopReason) String() string {
	if int(r) < len(stopReasonNames) {
		return stopReasonNames[r]
	}
	return fmt.Sprintf("StopReason(%d)", uint8(r))
}

// Truncated reports whether the walk may have missed callers.
func (r StopReason) Truncated() bool { return r != StopEnd }

// Config configures a Walker.
type Config struct {
	// Arch selects the frame-record layout. Required.
	Arch Arch
	// MaxFrames bounds the number of addresses a walk returns, the PC
	// included. Zero means DefaultMaxFrames; values above MaxMaxFrames are
	// rejected.
	MaxFrames int
	// AddrMask is applied to every code address read (PC, LR, return
	// addresses) to strip pointer-authentication bits on arm64e. Zero means no
	// stripping. On macOS it is ^uint64(0) >> (64 - machdep.virtual_address_size).
	AddrMask uint64
	// Fallback reads stack memory outside the bulk copy. Nil means such
	// reads fail and end the walk.
	Fallback MemoryReader
	// TablesOnly makes WalkCFI end a walk at a frame whose code no table
	// covers, instead of following its frame record (MethodCFI).
	TablesOnly bool
}

// Walker walks frame-pointer chains, treating every value read as hostile.
// It holds no per-walk state, so one Walker may be shared by concurrent
// walks if its Fallback reader allows it. Functions without a frame record
// (leaves, assembly, prologues), tail calls and inlined functions are not
// seen: that is the method's limit.
type Walker struct {
	arch       Arch
	maxFrames  int
	mask       uint64
	fallback   MemoryReader
	key        hashKey // the process's hash key, copied for the walk's loop
	tablesOnly bool
}

// swiftAsyncMask selects bits 63:60 of a saved frame pointer. A value of
// 0b0001 there marks a Swift async frame record [AsyncContext, FP|1<<60, LR].
const (
	swiftAsyncMask = uint64(0xF) << 60
	swiftAsyncFlag = uint64(0x1) << 60
)

// NewWalker checks cfg and returns a Walker.
func NewWalker(cfg Config) (*Walker, error) {
	if cfg.Arch != ArchAMD64 && cfg.Arch != ArchARM64 {
		return nil, fmt.Errorf("unwind: unsupported architecture %v", cfg.Arch)
	}
	if cfg.MaxFrames < 0 || cfg.MaxFrames > MaxMaxFrames {
		return nil, fmt.Errorf("unwind: frame limit %d out of range [0, %d] (0 means %d)", cfg.MaxFrames, MaxMaxFrames, DefaultMaxFrames)
	}
	if cfg.MaxFrames == 0 {
		cfg.MaxFrames = DefaultMaxFrames
	}
	mask := cfg.AddrMask
	if mask == 0 {
		mask = ^uint64(0)
	}
	return &Walker{arch: cfg.Arch, maxFrames: cfg.MaxFrames, mask: mask, fallback: cfg.Fallback, key: procHashKey, tablesOnly: cfg.TablesOnly}, nil
}

// Arch returns the architecture the walker decodes.
func (w *Walker) Arch() Arch { return w.arch }

// MaxFrames returns the frame limit.
func (w *Walker) MaxFrames() int { return w.maxFrames }

// Result summarises one walk.
type Result struct {
	// Stop is why the walk ended.
	Stop StopReason
	// AsyncFrames counts Swift async frame records crossed.
	AsyncFrames int
	// FallbackReads counts frame records (WalkCFI: words) read outside
	// the bulk copy.
	FallbackReads int
	// CFIFrames counts the frames WalkCFI unwound with an unwind table
	// rather than a frame record; zero for Walk.
	CFIFrames int
	// ScannedFrames counts the frames of those whose return address was
	// found by scanning the stack copy, the CFA being out of reach
	// (WalkCFI's scanReturn).
	ScannedFrames int
	// StackSwitches counts the stack switches WalkCFI followed: frame
	// records of code that keeps frame pointers (Go) that lead from g0's
	// stack to the goroutine's (switchStack).
	StackSwitches int
	// AfterSampleFrames counts the frames whose return addresses WalkCFI
	// read through Stack.After, past the copy (the AfterSampleMark before
	// them not counted).
	AfterSampleFrames int
	// outermost: the walk ended at the frame a table marks outermost (its
	// return address undefined).
	outermost bool
	// afterReads counts the words read through Stack.After.
	afterReads int
	// Top is the highest CFA of the frames WalkCFI unwound with a table
	// (0: none): with the words read below it, what a stack copy must
	// hold for the walk to stay in it, as far as the tables tell.
	Top uint64
	// ChainFrames counts the frames taken from Stack.Chain.
	ChainFrames int
	// at is the frame the walk was unwinding when it ended, while
	// WalkCFI runs.
	at frameAt
	// Hash is HashPCs of exactly the addresses the walk returned, computed
	// as they were read: a keyed 64-bit hash, never zero, whose key is
	// drawn at random once per process so that a target cannot craft
	// colliding stacks offline. The zero Result (no walk) has Hash zero,
	// which therefore means "not computed".
	Hash uint64
}

// frameAt is a frame of a walk: the address its rule was looked up at,
// its SP and FP.
type frameAt struct{ look, sp, fp uint64 }

// LeftCopy reports whether the walk needed memory past its stack copy and
// had no fallback reader for it: it ended there (StopReadFailed), or read
// it after the sample (Stack.After). A larger copy would have served it.
func (r Result) LeftCopy() bool { return r.Stop == StopReadFailed || r.afterReads > 0 }

// Walk appends the PC and then the return address of each caller to dst[:0]
// and returns the filled slice. It never grows dst beyond its capacity: with
// a capacity smaller than the frame limit the walk ends with StopNoRoom.
// Addresses are returned as read (return addresses point after the call);
// symbolizers look up addr-1 for every frame but the first.
//
// Frame records are accepted only inside [stack.Lo, stack.Hi), at or above
// the stack pointer (on arm64 up to 16 bytes below it, where Go's compiler
// keeps the innermost record), 8-byte aligned, and each at or above the end
// of the one before it (records never overlap), so a walk always ends, after
// at most (Hi-Lo)/16 records or the frame limit.
//
// On arm64 the caller of the interrupted function is taken from LR unless the
// first frame record already holds the same return address (the function
// has pushed its record), so a caller is never reported twice. A function
// that has pushed its record and since returned from a call of its own still
// holds a stale LR pointing into itself; without unwind tables that case
// cannot be told apart from a leaf, and the function then appears twice.
func (w *Walker) Walk(regs Regs, stack *Stack, dst []uint64) ([]uint64, Result) {
	out, res, s, half := w.walk(regs, stack, dst)
	// Every return of walk comes through here: the hash always covers
	// exactly out.
	res.Hash = w.key.finish(s, half, len(out))
	return out, res
}

// walk does the work of Walk. Besides the addresses and the Result it
// returns the state of the hash of the addresses (see hash.go): s, which
// holds every pair of addresses, and half, the last address when their
// number is odd. The address at position n-1 is folded in by
// s, half = w.key.push(s, half, addr, n).
func (w *Walker) walk(regs Regs, stack *Stack, dst []uint64) (_ []uint64, _ Result, s, half uint64) {
	dst = dst[:0]
	var res Result
	s = w.key.s
	limit, full := w.maxFrames, StopMaxFrames
	if cap(dst) < limit {
		limit, full = cap(dst), StopNoRoom
	}
	if limit == 0 {
		res.Stop = full
		return dst, res, s, half
	}
	mask := w.mask
	pc := regs.PC & mask
	if pc == 0 {
		res.Stop = StopEnd
		return dst, res, s, half
	}
	dst = append(dst, pc)
	half = pc

	// The lowest address a frame record may start at: the region's start,
	// raised to SP (arm64: SP-16, because Go's arm64 prologue stores the
	// frame record at SP-8).
	regionLo := stack.Lo
	lo := regionLo
	sp := regs.SP
	if w.arch == ArchARM64 {
		if sp >= 16 {
			sp -= 16
		} else {
			sp = 0
		}
	}
	if sp > lo {
		lo = sp
	}
	// The highest address a frame record may start at: Hi-16, so that the
	// whole 16-byte record lies below Hi. With Hi < 16 no record fits.
	maxFP := uint64(0)
	if stack.Hi >= 16 {
		maxFP = stack.Hi - 16
	}
	// Records wholly inside both the bounds and the bulk copy are read by
	// the fast loop: fp >= lo, fp-base <= span (which implies fp >= base and
	// fp <= maxFP and the record inside Data) and 8-byte aligned. Everything
	// else (zero, misaligned, Swift async flag, out of bounds, fallback
	// reads, the arm64 LR rule) takes the slow path one record at a time.
	base, data := stack.Base, stack.Data
	span, haveSpan := uint64(0), false
	if len(data) >= 16 && maxFP >= base {
		span, haveSpan = min(uint64(len(data))-16, maxFP-base), true
	}
	if !haveSpan {
		base, span = 1, 0 // fp-1 <= 0 only for fp == 1, which is misaligned
	}
	lo0 := lo

	// arm64: the caller of a leaf that has not pushed its frame record yet
	// is only in LR. It is reported before the first record's return
	// address, unless that address is the same (see the doc comment).
	pendingLR := uint64(0)
	if w.arch == ArchARM64 {
		pendingLR = regs.LR & mask
	}

	fp := regs.FP
	n := len(dst)
	dst = dst[:limit]
	for {
		if pendingLR == 0 && littleEndianHost {
			var stop bool
			if n, fp, lo, stop, s, half = walkFast(data, base, span, mask, fp, lo, dst, n, s, half, w.key.kb); stop {
				// walkFast ends the walk only at a zero return address or
				// a full dst.
				res.Stop = StopEnd
				if n == limit {
					res.Stop = full
				}
				return dst[:n], res, s, half
			}
		}
		// The slow path: one record, or the end of the walk.
		if fp&swiftAsyncMask == swiftAsyncFlag {
			fp &^= swiftAsyncMask
			res.AsyncFrames++
		}
		if fp == 0 {
			res.Stop = StopEnd
			break
		}
		if fp%8 != 0 {
			res.Stop = StopMisaligned
			break
		}
		if fp < lo || fp > maxFP {
			res.Stop = StopOutOfStack
			if lo != lo0 && fp >= regionLo && fp <= maxFP {
				// Inside the region, but below the previous record.
				res.Stop = StopNotIncreasing
			}
			break
		}
		var next, ret uint64
		if off := fp - base; off <= span {
			next = binary.LittleEndian.Uint64(data[off:])
			ret = binary.LittleEndian.Uint64(data[off+8:])
		} else {
			if w.fallback == nil {
				res.Stop = StopReadFailed
				break
			}
			res.FallbackReads++
			var ok bool
			if next, ret, ok = w.readRecord(fp); !ok {
				res.Stop = StopReadFailed
				break
			}
		}
		ret &= mask
		if pendingLR != 0 {
			if pendingLR != ret {
				if n >= limit {
					res.Stop = full
					return dst[:n], res, s, half
				}
				dst[n] = pendingLR
				n++
				s, half = w.key.push(s, half, pendingLR, n)
			}
			pendingLR = 0
		}
		if ret == 0 {
			res.Stop = StopEnd
			break
		}
		if n >= limit {
			res.Stop = full
			return dst[:n], res, s, half
		}
		dst[n] = ret
		n++
		s, half = w.key.push(s, half, ret, n)
		lo = fp + 16
		fp = next
	}
	// The walk ended before the first frame record was read: LR still
	// holds the caller of the interrupted function.
	if pendingLR != 0 {
		if n >= limit {
			res.Stop = full
			return dst[:n], res, s, half
		}
		dst[n] = pendingLR
		n++
		s, half = w.key.push(s, half, pendingLR, n)
	}
	return dst[:n], res, s, half
}

// littleEndianHost reports whether this machine stores words little-endian,
// like the amd64 and arm64 stacks the walker decodes; walkFast loads words
// in host order, so on a big-endian host every record takes the slow path.
var littleEndianHost = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// walkFast follows the chain from fp while each record lies at or above lo
// and wholly inside data (fp-base <= span, 8-byte aligned), appending return
// addresses to dst[n:] and folding them into the hash state s, half (kb is
// the key's pair constant). It returns the new n, fp and lo, whether the
// walk is over (a zero return address, or dst full), and the hash state.
// It is Walk's hot loop: plain loads, because the loop condition proves the
// bounds, and two records per turn, so that the hash step needs no parity
// test.
func walkFast(data []byte, base, span, mask, fp, lo uint64, dst []uint64, n int, s, half, kb uint64) (int, uint64, uint64, bool, uint64, uint64) {
	if uint64(len(data)) < span+16 || span+16 < span {
		return n, fp, lo, false, s, half // not reached: Walk sets span <= len(data)-16
	}
	p := unsafe.Pointer(unsafe.SliceData(data))
	if n%2 == 1 && fp >= lo && fp-base <= span && fp%8 == 0 {
		// dst[n-1] (half) waits for the address that completes its pair.
		// fp-base+16 <= len(data): both words lie inside data.
		rec := unsafe.Add(p, fp-base)
		ret := *(*uint64)(unsafe.Add(rec, 8)) & mask
		if ret == 0 || n >= len(dst) {
			return n, fp, lo, true, s, half
		}
		dst[n] = ret
		n++
		s = mum(s^half, ret^kb)
		lo = fp + 16 // fp <= maxFP = Hi-16: no overflow
		fp = *(*uint64)(rec)
	}
	if n%2 == 1 {
		return n, fp, lo, false, s, half
	}
	for fp >= lo && fp-base <= span && fp%8 == 0 {
		// The first address of a pair.
		rec := unsafe.Add(p, fp-base)
		ret := *(*uint64)(unsafe.Add(rec, 8)) & mask
		if ret == 0 || n >= len(dst) {
			return n, fp, lo, true, s, half
		}
		dst[n] = ret
		n++
		half = ret
		lo = fp + 16
		fp = *(*uint64)(rec)
		if fp < lo || fp-base > span || fp%8 != 0 {
			break
		}
		// The second.
		rec = unsafe.Add(p, fp-base)
		ret = *(*uint64)(unsafe.Add(rec, 8)) & mask
		if ret == 0 || n >= len(dst) {
			return n, fp, lo, true, s, half
		}
		dst[n] = ret
		n++
		s = mum(s^half, ret^kb)
		lo = fp + 16
		fp = *(*uint64)(rec)
	}
	return n, fp, lo, false, s, half
}

// recordBufs are the buffers fallback reads fill, each claimed with one
// compare-and-swap. A buffer passed to an interface method escapes, and
// sync.Pool may drop items, so both would allocate; past len(recordBufs)
// concurrent fallback reads a walk allocates a buffer of its own.
var recordBufs [16]struct {
	busy atomic.Bool
	buf  [16]byte
	_    [64 - 16 - 4]byte // one cache line each
}

// readRecord reads the frame record at fp through the fallback reader.
func (w *Walker) readRecord(fp uint64) (next, ret uint64, ok bool) {
	for i := range recordBufs {
		b := &recordBufs[i]
		if b.busy.CompareAndSwap(false, true) {
			next, ret, ok = w.readInto(fp, b.buf[:])
			b.busy.Store(false)
			return next, ret, ok
		}
	}
	return w.readInto(fp, make([]byte, 16))
}

// readInto reads the frame record at fp into buf through the fallback.
func (w *Walker) readInto(fp uint64, buf []byte) (next, ret uint64, ok bool) {
	if err := w.fallback.ReadMemory(fp, buf); err != nil {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint64(buf[0:8]), binary.LittleEndian.Uint64(buf[8:16]), true
}
