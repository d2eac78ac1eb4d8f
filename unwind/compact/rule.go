package compact

import (
	"fmt"

	"github.com/macprof/macprof/unwind"
)

// Kind says how a function unwinds.
type Kind uint8

// The kinds of rule. Which encodings map to which kind is in Decode.
const (
	// KindNone: the function has no compact unwind information (encoding 0).
	KindNone Kind = iota
	// KindFrame: the function keeps a frame record at FP (arm64
	// UNWIND_ARM64_MODE_FRAME, x86_64 UNWIND_X86_64_MODE_RBP_FRAME).
	KindFrame
	// KindFrameless: the caller's SP is SP+StackSize; the return address
	// is in LR (arm64 UNWIND_ARM64_MODE_FRAMELESS) or at SP+StackSize-8
	// (x86_64 UNWIND_X86_64_MODE_STACK_IMMD and _STACK_IND).
	KindFrameless
	// KindDWARF: the function unwinds by the __eh_frame FDE at DWARFOffset.
	KindDWARF
	// KindInvalid: the encoding cannot be decoded (an unknown mode, a bad
	// register permutation, or a _STACK_IND size that could not be read).
	KindInvalid
)

var kindNames = [...]string{"none", "frame", "frameless", "dwarf", "invalid"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Reg names a callee-saved register a compact encoding restores.
type Reg uint8

// Registers of x86_64 encodings, numbered as UNWIND_X86_64_REG_NONE..RBP
// (compact_unwind_encoding.h lines 224-230).
const (
	RegNone Reg = iota
	RegRBX
	RegR12
	RegR13
	RegR14
	RegR15
	RegRBP
)

var regNames = [...]string{"none", "rbx", "r12", "r13", "r14", "r15", "rbp"}

func (r Reg) String() string {
	if int(r) < len(regNames) {
		return regNames[r]
	}
	return fmt.Sprintf("Reg(%d)", uint8(r))
}

// ARM64 saved-pair bits of Decoded.Pairs, in the order the pairs are stored
// below the frame record (UNWIND_ARM64_FRAME_*_PAIR, compact_unwind_encoding.h
// lines 292-300).
const (
	PairX19X20 uint16 = 0x001
	PairX21X22 uint16 = 0x002
	PairX23X24 uint16 = 0x004
	PairX25X26 uint16 = 0x008
	PairX27X28 uint16 = 0x010
	PairD8D9   uint16 = 0x100
	PairD10D11 uint16 = 0x200
	PairD12D13 uint16 = 0x400
	PairD14D15 uint16 = 0x800
)

// Decoded is one function range's compact unwind encoding, decoded: the
// format's view of it (a walk takes the unwind.Rule it becomes).
type Decoded struct {
	// Start and End bound the range, as offsets from the image's mach
	// header; End is the next entry's Start.
	Start, End uint32
	Encoding   uint32
	Kind       Kind
	// StackSize is, for KindFrameless, the bytes between SP and the
	// caller's SP (on x86_64 the return address included).
	StackSize uint32
	// StackIndirect marks an x86_64 _STACK_IND rule, whose size was read
	// from the function's own "sub $n, %rsp" at SubOffset bytes into it.
	StackIndirect bool
	SubOffset     uint32
	// Pairs holds the arm64 register pairs saved (Pair* bits).
	Pairs uint16
	// RegsOffset is, for x86_64 KindFrame, how far below RBP the saved
	// registers start; Regs lists them from there upward.
	RegsOffset uint32
	// Regs lists the x86_64 registers saved: for KindFrame the five slots
	// from RBP-RegsOffset up (RegNone for an unused slot); for
	// KindFrameless the NRegs registers pushed, from the lowest address up.
	Regs  [6]Reg
	NRegs uint8
	// DWARFOffset is, for KindDWARF, the FDE's offset in __eh_frame.
	DWARFOffset uint32
	// Personality is the 1-based personality index (0: none); HasLSDA
	// says the LSDA index holds an entry for the function.
	Personality uint8
	HasLSDA     bool

	// rbpSlot is, for x86_64 KindFrameless, 1 + the index in Regs of RBP,
	// or 0 when RBP is not saved: the step restores FP from it.
	rbpSlot uint8
}

// Decode turns an encoding into a rule for arch. subImm reads the 32-bit
// immediate of an x86_64 _STACK_IND function's "sub $n, %rsp" at the given
// image offset; nil, or a false result, makes such rules KindInvalid.
func Decode(arch unwind.Arch, start, end, enc uint32, subImm func(off uint32) (uint32, bool)) Decoded {
	return decode(arch, start, end, enc, indirectSize(start, enc, subImm))
}

// indirectSize returns the stack size of an x86_64 _STACK_IND encoding
// (the sub immediate plus 8*UNWIND_X86_64_FRAMELESS_STACK_ADJUST, as
// CompactUnwinder.hpp computes it), or 0 when it cannot be read.
func indirectSize(start, enc uint32, subImm func(off uint32) (uint32, bool)) uint32 {
	if enc&x86ModeMask != x86ModeStackInd || subImm == nil {
		return 0
	}
	at := start + (enc&x86FramelessStackSize)>>16
	if at < start {
		return 0
	}
	imm, ok := subImm(at)
	size := uint64(imm) + 8*uint64((enc&x86FramelessStackAdjust)>>13)
	if !ok || size >= 1<<31 {
		return 0
	}
	return uint32(size)
}

// decode is Decode with the _STACK_IND size already read (0: unknown).
func decode(arch unwind.Arch, start, end, enc, indSize uint32) Decoded {
	r := Decoded{Start: start, End: end, Encoding: enc,
		Personality: uint8((enc & encPersonalityMask) >> encPersonalityShift),
		HasLSDA:     enc&encHasLSDA != 0}
	if enc == 0 {
		return r // KindNone
	}
	r.Kind = KindInvalid
	switch arch {
	case unwind.ArchARM64:
		decodeARM64(&r, enc)
	case unwind.ArchAMD64:
		decodeX86(&r, enc, indSize)
	}
	return r
}

// decodeARM64 follows CompactUnwinder_arm64::stepWithCompactEncoding.
func decodeARM64(r *Decoded, enc uint32) {
	switch enc & arm64ModeMask {
	case arm64ModeFrame:
		r.Kind, r.Pairs = KindFrame, uint16(enc&arm64SavedPairsMask)
	case arm64ModeFrameless:
		r.Kind, r.Pairs = KindFrameless, uint16(enc&arm64SavedPairsMask)
		r.StackSize = 16 * ((enc & arm64FramelessStackMask) >> 12)
	case arm64ModeDWARF:
		r.Kind, r.DWARFOffset = KindDWARF, enc&arm64DWARFSectionOffset
	}
}

// decodeX86 follows CompactUnwinder_x86_64::stepWithCompactEncodingRBPFrame
// and stepWithCompactEncodingFrameless.
func decodeX86(r *Decoded, enc, indSize uint32) {
	switch enc & x86ModeMask {
	case x86ModeRBPFrame:
		r.RegsOffset = 8 * ((enc & x86RBPFrameOffset) >> 16)
		regs := enc & x86RBPFrameRegisters
		for i := 0; i < 5; i++ {
			reg := Reg(regs & 7)
			if reg > RegR15 { // RBP (6) and 7 are invalid here
				return
			}
			r.Regs[i] = reg
			regs >>= 3
		}
		r.NRegs = 5
		r.Kind = KindFrame
	case x86ModeStackImmd, x86ModeStackInd:
		size := (enc & x86FramelessStackSize) >> 16
		r.StackSize = 8 * size
		if enc&x86ModeMask == x86ModeStackInd {
			r.StackIndirect, r.SubOffset, r.StackSize = true, size, indSize
		}
		n := (enc & x86FramelessRegCount) >> 10
		if n > 6 || !permutation(r, n, enc&x86FramelessPermutation) {
			return
		}
		if uint64(r.StackSize) < 8*uint64(n)+8 {
			return // no room for the registers and the return address
		}
		for i := uint32(0); i < n; i++ {
			if r.Regs[i] == RegRBP {
				r.rbpSlot = uint8(i + 1)
			}
		}
		r.Kind = KindFrameless
	case x86ModeDWARF:
		r.Kind, r.DWARFOffset = KindDWARF, enc&x86DWARFSectionOffset
	}
}

// permutation decodes the Lehmer code of n registers chosen from the six
// of UNWIND_X86_64_REG_RBX..RBP (CompactUnwinder.hpp,
// stepWithCompactEncodingFrameless): digit i counts the unused registers
// before the i-th saved one, and has weight (5-i)*(4-i)*... down to 6-n+1.
func permutation(r *Decoded, n, p uint32) bool {
	var used [7]bool
	for i := uint32(0); i < n; i++ {
		w := uint32(1)
		for j := i + 1; j < n; j++ {
			w *= 6 - j
		}
		d := p / w
		p -= d * w
		if d >= 6-i {
			return false
		}
		for reg := uint32(1); reg <= 6; reg++ {
			if used[reg] {
				continue
			}
			if d == 0 {
				used[reg] = true
				r.Regs[i] = Reg(reg)
				break
			}
			d--
		}
	}
	r.NRegs = uint8(n)
	return true
}
