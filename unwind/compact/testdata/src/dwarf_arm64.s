// odd keeps no frame record: it saves x30 and x19 in a 32-byte frame and
// makes a call, which UNWIND_ARM64_MODE_FRAMELESS (leaves only) cannot
// describe, so its compact entry is DWARF mode, naming its FDE in
// __eh_frame. ld64.lld-14 neither relocates the __eh_frame MC writes nor
// fills in DWARF-mode offsets, so both are written here: the CIE and FDE
// with absolute pointers (lld relocates those) and the lengths folded by
// the assembler, the compact entry with the FDE's offset. dleaf is a
// frameless leaf whose compact entry MC writes (UNWIND_ARM64_MODE_FRAMELESS).
	.section __TEXT,__text,regular,pure_instructions
	.globl _odd
	.p2align 2
_odd:
	sub sp, sp, #32
	str x30, [sp, #16]
	str x19, [sp, #8]
	mov x19, x0
	bl _dleaf
	add x0, x0, x19
	ldr x19, [sp, #8]
	ldr x30, [sp, #16]
	add sp, sp, #32
	ret
Lodd_end:

	.globl _dleaf
	.p2align 2
_dleaf:
	.cfi_startproc
	add x0, x0, #1
	ret
	.cfi_endproc

	.section __TEXT,__eh_frame,regular
Leh:
	.long Lcie_end - Lcie_start
Lcie_start:
	.long 0                 // CIE id
	.byte 1                 // version
	.asciz "zR"
	.byte 1                 // code alignment factor
	.byte 0x78              // data alignment factor: -8
	.byte 30                // return address column: x30
	.byte 1                 // augmentation data: 1 byte
	.byte 0x00              // FDE pointers: DW_EH_PE_absptr
	.byte 0x0c, 31, 0       // DW_CFA_def_cfa: sp+0
	.byte 0, 0, 0, 0        // DW_CFA_nop to 8-byte alignment (arm64 MC will not fold lengths across .p2align)
Lcie_end:
Lfde:
	.long Lfde_end - Lfde_start
Lfde_start:
	.long Lfde_start - Leh  // the CIE, this far back
	.quad _odd              // initial location
	.quad Lodd_end - _odd   // address range
	.byte 0                 // augmentation data: none
	.byte 0x44, 0x0e, 32    // +4 (after sub): DW_CFA_def_cfa_offset 32
	.byte 0x44, 0x9e, 2     // +8: DW_CFA_offset x30 at CFA-16
	.byte 0x44, 0x93, 3     // +12: DW_CFA_offset x19 at CFA-24
	.byte 0x50, 0xd3        // +28 (x19 reloaded): DW_CFA_restore x19
	.byte 0x44, 0xde        // +32 (x30 reloaded): DW_CFA_restore x30
	.byte 0x44, 0x0e, 0     // +36 (after add): DW_CFA_def_cfa_offset 0
	.byte 0, 0, 0, 0, 0, 0, 0 // DW_CFA_nop to 8-byte alignment
Lfde_end:

	.section __LD,__compact_unwind,regular,debug
	.quad _odd
	.long Lodd_end - _odd
	.long 0x03000018        // UNWIND_ARM64_MODE_DWARF, FDE at 0x18
	.quad 0                 // personality
	.quad 0                 // LSDA
