# odd keeps no frame pointer and saves rbx with a mov into a 40-byte frame:
# UNWIND_X86_64_MODE_STACK_IMMD can only describe registers pushed right
# below the return address, so its compact entry is DWARF mode, naming
# its FDE in __eh_frame. ld64.lld-14 neither relocates the __eh_frame MC
# writes nor fills in DWARF-mode offsets, so both are written here: the
# CIE and FDE with absolute pointers (lld relocates those) and the lengths
# folded by the assembler, the compact entry with the FDE's offset.
# dleaf is a frameless leaf whose compact entry MC writes
# (UNWIND_X86_64_MODE_STACK_IMMD, rbx pushed).
	.section __TEXT,__text,regular,pure_instructions
	.globl _odd
	.p2align 4
_odd:
	subq $40, %rsp
	movq %rbx, 16(%rsp)
	movq %rdi, %rbx
	callq _dleaf
	addq %rbx, %rax
	movq 16(%rsp), %rbx
	addq $40, %rsp
	retq
Lodd_end:

	.globl _dleaf
	.p2align 4
_dleaf:
	.cfi_startproc
	pushq %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	leaq 1(%rdi), %rax
	popq %rbx
	retq
	.cfi_endproc

	.section __TEXT,__eh_frame,regular
Leh:
	.long Lcie_end - Lcie_start
Lcie_start:
	.long 0                 # CIE id
	.byte 1                 # version
	.asciz "zR"
	.byte 1                 # code alignment factor
	.byte 0x78              # data alignment factor: -8
	.byte 16                # return address column: rip
	.byte 1                 # augmentation data: 1 byte
	.byte 0x00              # FDE pointers: DW_EH_PE_absptr
	.byte 0x0c, 7, 8        # DW_CFA_def_cfa: rsp+8
	.byte 0x90, 1           # DW_CFA_offset: rip at CFA-8
	.p2align 3
Lcie_end:
Lfde:
	.long Lfde_end - Lfde_start
Lfde_start:
	.long Lfde_start - Leh  # the CIE, this far back
	.quad _odd              # initial location
	.quad Lodd_end - _odd   # address range
	.byte 0                 # augmentation data: none
	.byte 0x44, 0x0e, 48    # +4 (after sub): DW_CFA_def_cfa_offset 48
	.byte 0x45, 0x83, 4     # +9 (after the mov): DW_CFA_offset rbx at CFA-32
	.byte 0x50, 0xc3        # +25 (rbx reloaded): DW_CFA_restore rbx
	.byte 0x44, 0x0e, 8     # +29 (after add): DW_CFA_def_cfa_offset 8
	.p2align 3
Lfde_end:

	.section __LD,__compact_unwind,regular,debug
	.quad _odd
	.long Lodd_end - _odd
	.long 0x04000018        # UNWIND_X86_64_MODE_DWARF, FDE at 0x18
	.quad 0                 # personality
	.quad 0                 # LSDA
