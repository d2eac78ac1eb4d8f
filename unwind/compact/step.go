package compact

import (
	"encoding/binary"
	"fmt"

	"github.com/macprof/macprof/unwind"
)

// Status tells how a step ended.
type Status uint8

// Outcomes of Step. Only StepOK gives caller registers.
const (
	StepOK            Status = iota // the caller's registers were computed
	StepEnd                         // the return address is zero: the chain ends here
	StepDWARF                       // the rule defers to the __eh_frame FDE at Rule.DWARFOffset
	StepNoInfo                      // the function has no compact unwind rule
	StepInvalid                     // the encoding cannot be used (KindInvalid, or an arm64 frameless non-leaf)
	StepReadFailed                  // a slot lay outside the stack copy and the fallback reader
	StepNotIncreasing               // the caller's SP would not lie above the callee's (a cycle or a hostile stack)
	StepNoTable                     // Walk: the PC's image has no table yet (see Images.BuildWanted)
)

var statusNames = [...]string{"ok", "end of chain", "use DWARF CFI", "no compact unwind rule", "invalid rule", "stack memory unreadable", "stack pointer not increasing", "image table not built yet"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Stepper computes callers' registers from rules. It reads the stack from
// Stack's bulk copy and, for addresses inside [Stack.Lo, Stack.Hi) but
// outside the copy, from Fallback. It keeps a scratch buffer, so one
// Stepper serves one walk at a time; it allocates nothing.
type Stepper struct {
	Arch  unwind.Arch
	Stack unwind.Stack
	// Fallback reads stack memory outside the copy; nil means such reads fail.
	Fallback unwind.MemoryReader
	// AddrMask strips pointer-authentication bits from return addresses
	// (arm64e); zero means none.
	AddrMask uint64
	buf      [8]byte

	// The bulk copy as prepare found it: data starts at base, and an
	// 8-byte read at offset off lies in it when off < span.
	base, span uint64
	data       []byte
}

// prepare caches the bulk copy's bounds for read.
func (s *Stepper) prepare() {
	s.base, s.span, s.data = 0, 0, nil
	if st := &s.Stack; len(st.Data) >= 8 {
		s.base, s.span, s.data = st.Base, uint64(len(st.Data)-7), st.Data
	}
}

// read returns the 8 bytes at addr: from the bulk copy when they lie in
// it (a path small enough to inline; prepare must have run), else through
// readSlow.
func (s *Stepper) read(addr uint64) (uint64, bool) {
	if off := addr - s.base; off < s.span {
		return binary.LittleEndian.Uint64(s.data[off:]), true
	}
	return s.readSlow(addr)
}

// readFast is read's bulk-copy path alone, small enough to inline.
func (s *Stepper) readFast(addr uint64) (uint64, bool) {
	if off := addr - s.base; off < s.span {
		return binary.LittleEndian.Uint64(s.data[off:]), true
	}
	return 0, false
}

// readSlow reads outside the bulk copy, through Fallback, inside the
// stack's bounds.
func (s *Stepper) readSlow(addr uint64) (uint64, bool) {
	st := &s.Stack
	if s.Fallback == nil || addr > ^uint64(0)-8 || addr < st.Lo || addr+8 > st.Hi {
		return 0, false
	}
	if s.Fallback.ReadMemory(addr, s.buf[:]) != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(s.buf[:]), true
}

func (s *Stepper) mask(a uint64) uint64 {
	if s.AddrMask != 0 {
		return a & s.AddrMask
	}
	return a
}

// Step computes the caller's registers of the function r describes, from
// its registers regs. atStart says regs.PC is the function's first
// instruction in the innermost frame (interrupted before its prologue):
// then nothing has been pushed yet and the return address is in LR
// (arm64) or at SP (x86_64), whatever the rule.
//
// The caller's LR is unknown after a step and is set to zero; FP is
// restored where the rule saves it and kept otherwise. The caller's SP must
// lie above the callee's (on arm64 a frameless leaf may leave it equal), so
// a walk of Steps always ends.
//
// The rules follow CompactUnwinder.hpp: stepWithCompactEncodingFrame and
// stepWithCompactEncodingFrameless (arm64), frameUnwind and framelessUnwind
// (x86_64).
func (s *Stepper) Step(r *Rule, regs unwind.Regs, atStart bool) (unwind.Regs, Status) {
	s.prepare()
	pc, sp, fp, st := s.step(r, regs.SP, regs.FP, regs.LR, atStart)
	if st != StepOK {
		return regs, st
	}
	return unwind.Regs{PC: pc, SP: sp, FP: fp}, StepOK
}

// step is Step on the registers it needs; it returns the caller's PC, SP
// and FP.
func (s *Stepper) step(r *Rule, sp, fp, lr uint64, atStart bool) (uint64, uint64, uint64, Status) {
	if atStart {
		if s.Arch == unwind.ArchARM64 {
			return s.fromLR(sp, fp, lr, sp)
		}
		return s.fromStack(sp, sp, fp)
	}
	switch r.Kind {
	case KindFrame:
		// [FP] is the caller's FP, [FP+8] the return address; the caller's
		// SP is FP+16 (both architectures).
		if fp < sp || fp > ^uint64(0)-16 {
			return 0, 0, 0, StepNotIncreasing
		}
		var callerFP, ret uint64
		if off := fp - s.base; off < s.span && s.span-off > 8 {
			// The whole record lies in the bulk copy.
			rec := s.data[off : off+16]
			callerFP, ret = binary.LittleEndian.Uint64(rec), binary.LittleEndian.Uint64(rec[8:])
		} else {
			var ok1, ok2 bool
			callerFP, ok1 = s.read(fp)
			ret, ok2 = s.read(fp + 8)
			if !ok1 || !ok2 {
				return 0, 0, 0, StepReadFailed
			}
		}
		return s.caller(sp, ret, fp+16, callerFP)
	case KindFrameless:
		if s.Arch == unwind.ArchARM64 {
			return s.fromLR(sp, fp, lr, sp+uint64(r.StackSize))
		}
		// The return address lies at SP+StackSize-8, the saved registers
		// just below it.
		retAt := sp + uint64(r.StackSize) - 8
		if retAt < sp {
			return 0, 0, 0, StepNotIncreasing
		}
		if r.rbpSlot != 0 {
			v, ok := s.read(retAt - 8*uint64(r.NRegs) + 8*uint64(r.rbpSlot-1))
			if !ok {
				return 0, 0, 0, StepReadFailed
			}
			fp = v
		}
		return s.fromStack(sp, retAt, fp)
	case KindNone:
		return 0, 0, 0, StepNoInfo
	case KindDWARF:
		return 0, 0, 0, StepDWARF
	}
	return 0, 0, 0, StepInvalid
}

// fromLR takes the return address from LR and the caller's SP as given.
func (s *Stepper) fromLR(sp, fp, lr, callerSP uint64) (uint64, uint64, uint64, Status) {
	if lr == 0 {
		// Only the innermost frame has a known LR; a frameless function
		// further out must have saved it, which no compact rule describes.
		return 0, 0, 0, StepInvalid
	}
	if callerSP < sp {
		return 0, 0, 0, StepNotIncreasing
	}
	return s.mask(lr), callerSP, fp, StepOK
}

// fromStack pops the return address at retAt (x86_64).
func (s *Stepper) fromStack(sp, retAt, fp uint64) (uint64, uint64, uint64, Status) {
	ret, ok := s.readFast(retAt)
	if !ok {
		ret, ok = s.readSlow(retAt)
	}
	if !ok {
		return 0, 0, 0, StepReadFailed
	}
	return s.caller(sp, ret, retAt+8, fp)
}

func (s *Stepper) caller(sp, ret, callerSP, fp uint64) (uint64, uint64, uint64, Status) {
	if callerSP <= sp {
		return 0, 0, 0, StepNotIncreasing
	}
	ret = s.mask(ret)
	if ret == 0 {
		return 0, 0, 0, StepEnd
	}
	return ret, callerSP, fp, StepOK
}
