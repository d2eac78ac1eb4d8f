	.text
	.globl asmleaf
	.type asmleaf, @function
asmleaf:
	.cfi_startproc
	movl %edi, %eax
	addl $1, %eax
	ret
	.cfi_endproc
	.size asmleaf, .-asmleaf
