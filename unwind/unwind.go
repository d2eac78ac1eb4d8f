// Package unwind walks frame-pointer chains of amd64 and arm64 threads.
//
// The walker reads a thread's registers and a bulk copy of its stack and writes
// the program counter followed by the return addresses of its callers into a
// slice the caller owns. It makes no system calls and does not allocate: reads
// that fall outside the bulk copy go through a MemoryReader supplied by the
// backend. Every value it reads is treated as hostile: the walk stops on a zero,
// misaligned, out-of-bounds or non-increasing frame pointer, and after a
// configurable number of frames.
//
// Frame-pointer walking cannot see functions that do not keep a frame record
// (leaf functions compiled without one, hand-written assembly, a function
// stopped in its prologue or epilogue), tail calls, or inlined functions.
// Those limits are inherent in the method; see docs/ARCHITECTURE.md.
package unwind

import (
	"encoding/binary"
	"fmt"
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
type Stack struct {
	Base   uint64
	Data   []byte
	Lo, Hi uint64
}

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
	StopNotIncreasing                   // a frame pointer did not grow towards the stack base (also catches cycles)
	StopReadFailed                      // memory outside the bulk copy could not be read
	StopNoRoom                          // the output slice had no capacity left
)

var stopReasonNames = [...]string{
	StopEnd:           "end of chain",
	StopMaxFrames:     "frame limit reached",
	StopMisaligned:    "misaligned frame pointer",
	StopOutOfStack:    "frame pointer outside the stack",
	StopNotIncreasing: "frame pointer not increasing",
	StopReadFailed:    "stack memory unreadable",
	StopNoRoom:        "output buffer full",
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
}

// Walker walks frame-pointer chains. It holds no per-walk state, so one
// Walker may be shared by concurrent walks if its Fallback reader allows it.
type Walker struct {
	arch      Arch
	maxFrames int
	mask      uint64
	fallback  MemoryReader
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
		return nil, fmt.Errorf("unwind: frame limit %d out of range [1, %d]", cfg.MaxFrames, MaxMaxFrames)
	}
	if cfg.MaxFrames == 0 {
		cfg.MaxFrames = DefaultMaxFrames
	}
	mask := cfg.AddrMask
	if mask == 0 {
		mask = ^uint64(0)
	}
	return &Walker{arch: cfg.Arch, maxFrames: cfg.MaxFrames, mask: mask, fallback: cfg.Fallback}, nil
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
	// FallbackReads counts frame records read outside the bulk copy.
	FallbackReads int
}

// Walk appends the PC and then the return address of each caller to dst[:0]
// and returns the filled slice. It never grows dst beyond its capacity: with
// a capacity smaller than the frame limit the walk ends with StopNoRoom.
// Addresses are returned as read (return addresses point after the call);
// symbolizers look up addr-1 for every frame but the first.
func (w *Walker) Walk(regs Regs, stack *Stack, dst []uint64) ([]uint64, Result) {
	dst = dst[:0]
	var res Result
	limit, full := w.maxFrames, StopMaxFrames
	if cap(dst) < limit {
		limit, full = cap(dst), StopNoRoom
	}
	if limit == 0 {
		res.Stop = full
		return dst, res
	}
	pc := regs.PC & w.mask
	if pc == 0 {
		res.Stop = StopEnd
		return dst, res
	}
	dst = append(dst, pc)

	fp := regs.FP
	var rec [16]byte

	// arm64: a leaf that has not pushed its frame record yet keeps its
	// caller's return address only in LR. Report LR unless the first frame
	// record holds the same address (the leaf has pushed its record).
	if w.arch == ArchARM64 {
		lr := regs.LR & w.mask
		if lr != 0 {
			firstRet := uint64(0)
			if f := fp &^ swiftAsyncMask; f != 0 && f%8 == 0 && f >= stack.Lo && f <= stack.Hi-16 && f+16 > f {
				if w.read(stack, f, rec[:], &res) {
					firstRet = binary.LittleEndian.Uint64(rec[8:]) & w.mask
				}
			}
			if lr != firstRet {
				if len(dst) >= limit {
					res.Stop = full
					return dst, res
				}
				dst = append(dst, lr)
			}
		}
	}

	lo := stack.Lo
	if regs.SP > lo {
		lo = regs.SP
	}
	prev := uint64(0)
	for {
		if fp&swiftAsyncMask == swiftAsyncFlag {
			fp &^= swiftAsyncMask
			res.AsyncFrames++
		}
		if fp == 0 {
			res.Stop = StopEnd
			return dst, res
		}
		if fp%8 != 0 {
			res.Stop = StopMisaligned
			return dst, res
		}
		if fp < lo || stack.Hi < 16 || fp > stack.Hi-16 {
			res.Stop = StopOutOfStack
			return dst, res
		}
		if prev != 0 && fp <= prev {
			res.Stop = StopNotIncreasing
			return dst, res
		}
		if !w.read(stack, fp, rec[:], &res) {
			res.Stop = StopReadFailed
			return dst, res
		}
		next := binary.LittleEndian.Uint64(rec[0:])
		ret := binary.LittleEndian.Uint64(rec[8:]) & w.mask
		if ret == 0 {
			res.Stop = StopEnd
			return dst, res
		}
		if len(dst) >= limit {
			res.Stop = full
			return dst, res
		}
		dst = append(dst, ret)
		prev = fp
		fp = next
	}
}

// read fills rec from the bulk copy, or through the fallback reader when the
// record is not wholly inside it.
func (w *Walker) read(stack *Stack, addr uint64, rec []byte, res *Result) bool {
	n := uint64(len(rec))
	if addr >= stack.Base && addr-stack.Base <= uint64(len(stack.Data)) && uint64(len(stack.Data))-(addr-stack.Base) >= n {
		off := addr - stack.Base
		copy(rec, stack.Data[off:off+n])
		return true
	}
	if w.fallback == nil {
		return false
	}
	res.FallbackReads++
	return w.fallback.ReadMemory(addr, rec) == nil
}
