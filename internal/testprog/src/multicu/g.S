	.text
	.globl gap_fn
	.type gap_fn, @function
gap_fn:
	.file 1 "gap.S"
	.loc 1 20
	lea 5(%rdi), %eax
.Lhigh:
	.loc 1 21
	add %esi, %eax
	.loc 1 22
	ret
	.size gap_fn, .-gap_fn

	.section .debug_abbrev,"",@progbits
.Labbrev:
	.uleb128 1	# compile_unit, children: name string, stmt_list sec_offset, low_pc addr, high_pc data8
	.uleb128 0x11
	.byte 1
	.uleb128 0x03
	.uleb128 0x08
	.uleb128 0x10
	.uleb128 0x17
	.uleb128 0x11
	.uleb128 0x01
	.uleb128 0x12
	.uleb128 0x07
	.uleb128 0
	.uleb128 0
	.uleb128 2	# subprogram: name string, low_pc addr, high_pc data8
	.uleb128 0x2e
	.byte 0
	.uleb128 0x03
	.uleb128 0x08
	.uleb128 0x11
	.uleb128 0x01
	.uleb128 0x12
	.uleb128 0x07
	.uleb128 0
	.uleb128 0
	.uleb128 0

	.section .debug_info,"",@progbits
	.long .Linfo_end - .Linfo_start
.Linfo_start:
	.value 4
	.long .Labbrev
	.byte 8
	.uleb128 1
	.asciz "gap.S"
	.long .Lline
	.quad gap_fn
	.quad .Lhigh - gap_fn
	.uleb128 2
	.asciz "gap_fn"
	.quad gap_fn
	.quad .Lhigh - gap_fn
	.byte 0
.Linfo_end:

	.section .debug_line,"",@progbits
.Lline:
	.section .note.GNU-stack,"",@progbits
