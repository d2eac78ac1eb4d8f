#!/bin/sh
# build.sh rebuilds the compact unwind fixtures prog_arm64 and prog_x86_64
# from src/. Run it from any directory:
#
#	sh compactunwind/testdata/build.sh
#
# Needs clang (with the arm64 and x86_64 Apple targets) and ld64.lld-14
# (Debian: clang-14 lld-14). There is no macOS SDK here, so the programs are
# linked with -nostdlib and never run; the tests read their __unwind_info
# and code. fp.c keeps frame pointers, nofp.c omits them, eh.c has a
# cleanup (personality and LSDA), leaf_*.s is a hand-written frameless leaf.
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
done
ls -l prog_*
