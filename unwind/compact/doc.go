// Package compact reads Apple's compact unwind tables (the
// __TEXT,__unwind_info section of arm64 and x86_64 Mach-O images), compiles
// them into a sorted read-only table of per-function rules, and answers
// unwind.Tables for a process's images (Images), so that unwind's WalkCFI
// walks Mach-O code as it walks ELF code with DWARF CFI, without
// allocating.
//
// It exists because most macOS code, and every frameless leaf or assembly
// function, cannot be walked with frame pointers alone; __unwind_info is
// what Apple's own unwinder (libunwind's UnwindCursor) consults first.
//
// The format follows Apple's libunwind, include/mach-o/compact_unwind_encoding.h
// (apple-oss-distributions/libunwind, tag libunwind-201), which every
// constant in format.go cites by line; the rules follow
// src/CompactUnwinder.hpp of the same tree. A function whose encoding says
// UNWIND_*_MODE_DWARF is answered by the FDE at the encoded offset of the
// image's __TEXT,__eh_frame, compiled by unwind/cfi on first use, as
// UnwindCursor hands such functions to its DWARF unwinder.
package compact
