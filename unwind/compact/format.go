package compact

// Constants of the __unwind_info format, from Apple's
// libunwind/include/mach-o/compact_unwind_encoding.h (libunwind-201); the
// line of each is given beside it.
const (
	// Common to every architecture (lines 45-47).
	encHasLSDA          = 0x40000000 // UNWIND_HAS_LSDA, line 46
	encPersonalityMask  = 0x30000000 // UNWIND_PERSONALITY_MASK, line 47
	encPersonalityShift = 28

	// x86_64 (lines 206-230).
	x86ModeMask             = 0x0F000000 // UNWIND_X86_64_MODE_MASK, line 206
	x86ModeRBPFrame         = 0x01000000 // UNWIND_X86_64_MODE_RBP_FRAME, line 207
	x86ModeStackImmd        = 0x02000000 // UNWIND_X86_64_MODE_STACK_IMMD, line 208
	x86ModeStackInd         = 0x03000000 // UNWIND_X86_64_MODE_STACK_IND, line 209
	x86ModeDWARF            = 0x04000000 // UNWIND_X86_64_MODE_DWARF, line 210
	x86RBPFrameRegisters    = 0x00007FFF // UNWIND_X86_64_RBP_FRAME_REGISTERS, line 212
	x86RBPFrameOffset       = 0x00FF0000 // UNWIND_X86_64_RBP_FRAME_OFFSET, line 213
	x86FramelessStackSize   = 0x00FF0000 // UNWIND_X86_64_FRAMELESS_STACK_SIZE, line 215
	x86FramelessStackAdjust = 0x0000E000 // UNWIND_X86_64_FRAMELESS_STACK_ADJUST, line 216
	x86FramelessRegCount    = 0x00001C00 // UNWIND_X86_64_FRAMELESS_STACK_REG_COUNT, line 217
	x86FramelessPermutation = 0x000003FF // UNWIND_X86_64_FRAMELESS_STACK_REG_PERMUTATION, line 218
	x86DWARFSectionOffset   = 0x00FFFFFF // UNWIND_X86_64_DWARF_SECTION_OFFSET, line 220

	// arm64 (lines 287-303).
	arm64ModeMask           = 0x0F000000 // UNWIND_ARM64_MODE_MASK, line 287
	arm64ModeFrameless      = 0x02000000 // UNWIND_ARM64_MODE_FRAMELESS, line 288
	arm64ModeDWARF          = 0x03000000 // UNWIND_ARM64_MODE_DWARF, line 289
	arm64ModeFrame          = 0x04000000 // UNWIND_ARM64_MODE_FRAME, line 290
	arm64SavedPairsMask     = 0x00000F1F // UNWIND_ARM64_FRAME_X19_X20_PAIR..D14_D15_PAIR, lines 292-300
	arm64FramelessStackMask = 0x00FFF000 // UNWIND_ARM64_FRAMELESS_STACK_SIZE_MASK, line 302
	arm64DWARFSectionOffset = 0x00FFFFFF // UNWIND_ARM64_DWARF_SECTION_OFFSET, line 303

	// Section layout (lines 410-474).
	sectionVersion     = 1          // UNWIND_SECTION_VERSION, line 410
	headerSize         = 28         // struct unwind_info_section_header: seven uint32_t, lines 411-420
	indexEntrySize     = 12         // struct unwind_info_section_header_index_entry, lines 426-431
	lsdaEntrySize      = 8          // struct unwind_info_section_header_lsda_index_entry, lines 433-437
	regularEntrySize   = 8          // struct unwind_info_regular_second_level_entry, lines 446-450
	secondRegular      = 2          // UNWIND_SECOND_LEVEL_REGULAR, line 452
	regularHeaderSize  = 8          // struct unwind_info_regular_second_level_page_header, lines 453-458
	secondCompressed   = 3          // UNWIND_SECOND_LEVEL_COMPRESSED, line 461
	compressedHdrSize  = 12         // struct unwind_info_compressed_second_level_page_header, lines 462-469
	compressedOffMask  = 0x00FFFFFF // UNWIND_INFO_COMPRESSED_ENTRY_FUNC_OFFSET, line 473
	compressedIdxShift = 24         // UNWIND_INFO_COMPRESSED_ENTRY_ENCODING_INDEX, line 474
)
