	.text
	.globl norange_fn
	.type norange_fn, @function
norange_fn:
	.file 1 "norange.S"
	.loc 1 10
	lea 3(%rdi), %eax
	.loc 1 11
	imul %esi, %eax
	.loc 1 12
	ret
.Lend:
	.size norange_fn, .-norange_fn

	.section .debug_abbrev,"",@progbits
.Labbrev:
	.uleb128 1	# compile_unit, children: name string, stmt_list sec_offset
	.uleb128 0x11
	.byte 1
	.uleb128 0x03
	.uleb128 0x08
	.uleb128 0x10
	.uleb128 0x17
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
	.asciz "norange.S"
	.long .Lline
	.uleb128 2
	.asciz "norange_fn"
	.quad norange_fn
	.quad .Lend - norange_fn
	.byte 0
.Linfo_end:

	.section .debug_line,"",@progbits
.Lline:
	.section .note.GNU-stack,"",@progbits
