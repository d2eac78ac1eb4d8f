// Package cfi compiles an ELF object's DWARF call-frame information
// (.eh_frame and .debug_frame, amd64 and arm64) into a compact, sorted,
// read-only table from code address to the three rules a stack walk needs:
// where the canonical frame address (CFA) is, where the return address is,
// and where the caller's frame pointer was saved. It exists so that stacks of
// code built without frame pointers (most Linux distribution binaries) can be
// walked from a bulk stack copy without evaluating DWARF programs per sample.
//
// The table follows the idea of opentelemetry-ebpf-profiler's stack deltas
// (nativeunwind/elfunwindinfo): the CIE and FDE programs are run once, at
// load, and every row is reduced to "CFA = SP or FP + offset; return address
// at CFA+offset (amd64) or in LR or at CFA+offset (arm64); FP unchanged or
// saved at CFA+offset". Rows whose CFA is a DWARF expression (amd64 PLT
// stubs, signal trampolines) or another register are kept as
// CFAUnsupported, so that a walker knows it cannot go on rather than guess.
// Identical rules are stored once (a palette indexed by 16-bit numbers) and
// addresses as 32-bit offsets, with a per-4-KiB-page index in front of the
// binary search, so a lookup is a few memory reads.
//
// The parser is this package's own. The candidates were delve's
// pkg/dwarf/frame and golang.org/x/debug (whose dwarf/frame code is gone
// from its current versions). Delve's package parses .debug_frame and
// .eh_frame well, but it answers "the rules at one PC" by re-running an
// FDE's program up to that PC (FrameDescriptionEntry.EstablishFrame), does
// not expose the rows, so a table would need one run per instruction
// address, builds a map per evaluation, and would bring the whole delve
// module into macprof. What a table builder needs from CFI is small: the
// framing of CIEs and FDEs, the pointer encodings, and the row-producing
// instructions for three registers. That is what this package implements,
// with every length, offset, register-state stack and loop bounded by the
// input, so that hostile tables cannot panic, hang or allocate without
// bound (FuzzBuild).
//
// Where an object has the .eh_frame_hdr linkers write, Load does not compile
// its .eh_frame at load: it searches the header's sorted table for the FDE
// of an address and compiles that FDE into rows on the first lookup in it
// (ehIndex). A profile touches tens to hundreds of an object's thousands of
// functions, so this spares most of the build's CPU (figures in
// bench/RESULTS.md), which a profiler would otherwise take from the target
// while it starts. Build compiles everything at once, for .debug_frame and
// objects without a usable header. The two answer alike wherever FDEs do
// not overlap, as in the objects linkers make (TestLazyTableEqualsWholeBuild:
// libc, python3, the fixtures); where FDEs overlap, which GNU ld refuses
// to index, the index answers with the FDE the header's search finds, as
// libgcc's unwinder does, and a whole build with the FDE that starts first;
// where .eh_frame and .debug_frame both describe an address, the index's
// .eh_frame wins.
package cfi
