// Package compact reads Apple's compact unwind tables (the
// __TEXT,__unwind_info section of arm64 and x86_64 Mach-O images), compiles
// them into a sorted read-only table of per-function rules, and steps one
// frame from a rule, registers and a stack copy without allocating.
//
// It exists because most macOS code, and every frameless leaf or assembly
// function, cannot be walked with frame pointers alone; __unwind_info is
// what Apple's own unwinder (libunwind's UnwindCursor) consults first.
//
// The format follows Apple's libunwind, include/mach-o/compact_unwind_encoding.h
// (apple-oss-distributions/libunwind, tag libunwind-201), which every
// constant in format.go cites by line; the step follows
// src/CompactUnwinder.hpp of the same tree. Functions whose encoding says
// UNWIND_*_MODE_DWARF are reported with their __eh_frame offset for a DWARF
// CFI unwinder to take over.
package compact
