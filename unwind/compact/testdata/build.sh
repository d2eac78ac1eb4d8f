#!/bin/sh
# build.sh rebuilds the compact unwind fixtures prog_arm64 and prog_x86_64
# from src/. Run it from any directory:
#
#	sh unwind/compact/testdata/build.sh
#
# Needs clang (with the arm64 and x86_64 Apple targets) and ld64.lld-14
# (Debian: clang-14 lld-14). There is no macOS SDK here, so the programs are
# linked with -nostdlib and never run; the tests read their __unwind_info
# and code. fp.c keeps frame pointers, nofp.c omits them, eh.c has a
# cleanup (personality and LSDA), leaf_*.s is a hand-written frameless leaf;
# dwarf_* are the DWARF-mode fixtures (src/dwarf.c, src/dwarf_*.s).
set -eu
cd "$(dirname "$0")"
CC=${CC:-clang}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for arch in arm64 x86_64; do
	T="-target $arch-apple-macos11 -fno-stack-protector"
	$CC $T -O2 -fno-omit-frame-pointer -c src/fp.c -o "$TMP/fp.o"
	$CC $T -O2 -fomit-frame-pointer -c src/nofp.c -o "$TMP/nofp.o"
	$CC $T -O2 -fexceptions -c src/eh.c -o "$TMP/eh.o"
	$CC $T -c src/leaf_$arch.s -o "$TMP/leaf.o"
	$CC $T -O2 -c src/tail.c -o "$TMP/tail.o"
	$CC $T -fuse-ld=lld -nostdlib -Wl,-e,_main "$TMP/fp.o" "$TMP/nofp.o" "$TMP/eh.o" "$TMP/leaf.o" "$TMP/tail.o" -o prog_$arch
	# dwarf_$arch: odd has a DWARF-mode compact entry and an FDE, both
	# written in src/dwarf_$arch.s (see there why); its object is linked
	# first so that its __eh_frame starts the output's, where the entry's
	# FDE offset points.
	$CC $T -c src/dwarf_$arch.s -o "$TMP/dwarf_asm.o"
	$CC $T -O2 -fno-omit-frame-pointer -c src/dwarf.c -o "$TMP/dwarf_c.o"
	$CC $T -fuse-ld=lld -nostdlib -Wl,-e,_main "$TMP/dwarf_asm.o" "$TMP/dwarf_c.o" -o dwarf_$arch
done
# big_arm64: 2000 generated functions whose saved registers vary from one
# to the next, so that lld cannot fold their entries: an __unwind_info of
# several second-level pages. ext is in its own file so it is not inlined.
awk 'BEGIN {
	print "long ext(long);"
	for (i = 0; i < 2000; i++) {
		k = i % 5
		printf "__attribute__((noinline)) long f%d(long a) {", i
		if (k == 0) { printf "return a * %d + 7; }\n", i; continue }
		for (j = 0; j < k; j++) printf "long v%d = ext(a + %d); ", j, j
		printf "long s = "
		for (j = 0; j < k; j++) printf "v%d * %d + ", j, j + 1
		printf "ext(a); return s + a; }\n"
	}
	print "int main(void) { return (int)f1(2); }"
}' >"$TMP/big.c"
echo 'long ext(long a) { return a ^ 3; }' >"$TMP/ext.c"
$CC -target arm64-apple-macos11 -fno-stack-protector -O2 -fno-omit-frame-pointer -fuse-ld=lld -nostdlib -Wl,-e,_main "$TMP/big.c" "$TMP/ext.c" -o big_arm64
${STRIP:-$(command -v llvm-strip-14 || command -v llvm-strip)} big_arm64
ls -l prog_* big_arm64
