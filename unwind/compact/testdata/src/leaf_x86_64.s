# leaf_asm is a frameless x86_64 leaf: its return address stays at the stack
# pointer. Hand-written assembly on macOS states its compact unwind encoding
# in a __LD,__compact_unwind row, as compact_unwind_encoding.h ("Relocatable
# Object Files") shows: 0x02010000 is UNWIND_X86_64_MODE_STACK_IMMD with a
# stack size of 1*8 bytes (the return address) and no saved registers.
	.text
	.globl	_leaf_asm
	.p2align	4
_leaf_asm:
	leaq	1(%rdi), %rax
	imulq	$9, %rax, %rax
	addq	$7, %rax
	retq
Lleaf_end:

	.section	__LD,__compact_unwind,regular,debug
	.p2align	3
	.quad	_leaf_asm
	.set	Lleaf_len, Lleaf_end-_leaf_asm
	.long	Lleaf_len
	.long	0x02010000
	.quad	0
	.quad	0
