// leaf_asm is a frameless arm64 leaf: it never touches the stack and its
// return address stays in LR. Hand-written assembly on macOS states its
// compact unwind encoding in a __LD,__compact_unwind row, as
// compact_unwind_encoding.h ("Relocatable Object Files") shows:
// 0x02000000 is UNWIND_ARM64_MODE_FRAMELESS with a stack size of 0.
	.text
	.globl	_leaf_asm
	.p2align	2
_leaf_asm:
	add	x0, x0, #1
	eor	x0, x0, x0, lsl #3
	add	x0, x0, #7
	ret
Lleaf_end:

	.section	__LD,__compact_unwind,regular,debug
	.p2align	3
	.quad	_leaf_asm
	.set	Lleaf_len, Lleaf_end-_leaf_asm
	.long	Lleaf_len
	.long	0x02000000
	.quad	0
	.quad	0
