	.text
	.globl asm_add
	.type asm_add, @function
asm_add:
	lea (%rdi,%rsi), %eax
	add $1, %eax
	ret
	.size asm_add, .-asm_add
	.section .note.GNU-stack,"",@progbits
