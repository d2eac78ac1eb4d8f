	.text
	.globl asmleaf
	.type asmleaf, %function
asmleaf:
	.cfi_startproc
	add w0, w0, #1
	ret
	.cfi_endproc
	.size asmleaf, .-asmleaf
