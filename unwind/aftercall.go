package unwind

import "encoding/binary"

// FollowsCall reports whether the 8 bytes before a return address (before,
// loaded little-endian from ret-8) end with a call instruction of arch, as
// they must where a call pushed it: on amd64 CALL rel32 (E8) or CALL r/m64
// (FF /2, 2 to 7 bytes with its ModRM, SIB and displacement; a prefix
// before the opcode does not change where it ends); on arm64 BL, BLR,
// BLRAA, BLRAB, BLRAAZ or BLRABZ. WalkCFI checks every return address it
// reads after the sample with it.
func FollowsCall(arch Arch, before uint64) bool {
	if arch == ArchARM64 {
		// The instruction at ret-4.
		insn := uint32(before >> 32)
		return insn&0xfc00_0000 == 0x9400_0000 || // BL
			insn&0xffff_fc1f == 0xd63f_0000 || // BLR
			insn&0xffff_f81f == 0xd63f_081f || // BLRAAZ, BLRABZ
			insn&0xffff_f800 == 0xd73f_0800 // BLRAA, BLRAB
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], before)
	if b[3] == 0xe8 { // CALL rel32 at ret-5
		return true
	}
	for n := 2; n <= 7; n++ {
		p := 8 - n
		if b[p] != 0xff {
			continue
		}
		var sib byte
		if p+2 < len(b) {
			sib = b[p+2]
		}
		if indirectCallLen(b[p+1], sib) == n {
			return true
		}
	}
	return false
}

// indirectCallLen returns the length of the instruction FF modrm [sib]
// [disp] when it is CALL r/m64 (ModRM.reg = 2), 0 otherwise; sib is read
// only where ModRM says one follows.
func indirectCallLen(modrm, sib byte) int {
	if modrm>>3&7 != 2 {
		return 0
	}
	mod, rm := modrm>>6, modrm&7
	n := 2
	if mod == 3 {
		return n // a register
	}
	switch {
	case rm == 4: // a SIB byte; base 5 with mod 0: a 32-bit displacement
		n++
		if mod == 0 && sib&7 == 5 {
			n += 4
		}
	case mod == 0 && rm == 5: // RIP-relative
		n += 4
	}
	switch mod {
	case 1:
		n++
	case 2:
		n += 4
	}
	return n
}
