#!/bin/sh
# build.sh rebuilds the Mach-O fixtures in images/testdata/macho from the
# sources in images/testdata/macho/src. Run it from any directory:
#
#	sh images/testdata/build.sh
#
# Needs clang (with the arm64 and x86_64 Apple targets), ld64.lld, llvm-strip,
# dsymutil and llvm-lipo (Debian: clang-14 lld-14 llvm-14). There is no macOS
# SDK here, so every image is linked with -nostdlib: executables name their
# entry point with -e _main, and nothing calls into libSystem.
set -eu
cd "$(dirname "$0")/macho"

CC=${CC:-clang}
LIPO=${LIPO:-$(command -v llvm-lipo-14 || command -v llvm-lipo)}
STRIP=${STRIP:-$(command -v llvm-strip-14 || command -v llvm-strip)}
DSYMUTIL=${DSYMUTIL:-dsymutil}
# Object files go to obj/ here and the debug map names them relative to
# this directory (-oso_prefix), so that rebuilding gives identical bytes
# (the UUID covers the debug map) wherever the checkout is.
TMP=obj
mkdir -p "$TMP"
trap 'rm -rf "$PWD/obj"' EXIT
OSO="-Wl,-oso_prefix,$PWD/"

for arch in arm64 x86_64; do
	T="-target $arch-apple-macos11 -fuse-ld=lld -nostdlib"
	# The C program, with DWARF (kept only in the dSYM) and without.
	# -fdebug-prefix-map keeps the build directory out of the fixtures.
	# dsymutil reads the DWARF from the object file the debug map names.
	$CC -target $arch-apple-macos11 -O2 -g -fdebug-prefix-map="$PWD"=/fixtures -c src/prog.c -o "$TMP/prog_$arch.o"
	touch -t 200001010000 "$TMP/prog_$arch.o" # the debug map records the mtime
	$CC $T $OSO -Wl,-e,_main "$PWD/$TMP/prog_$arch.o" -o prog_$arch
	rm -rf prog_$arch.dSYM
	$DSYMUTIL --oso-prepend-path="$PWD" prog_$arch -o prog_$arch.dSYM
	$STRIP --strip-debug prog_$arch
	# Stripped of every symbol a loader does not need: only
	# LC_FUNCTION_STARTS is left to find functions.
	$STRIP prog_$arch -o prog_${arch}_stripped
	# A dylib.
	$CC $T -O2 -dynamiclib -Wl,-install_name,@rpath/libdemo.dylib src/lib.c -o libdemo_$arch.dylib
	# C++ and Objective-C.
	# The C++ program keeps its debug map (N_STAB symbols), which the
	# symbol loader must skip; its object file is gone, as on a user's Mac.
	$CC -target $arch-apple-macos11 -O1 -g -fdebug-prefix-map="$PWD"=/fixtures -fno-exceptions -fno-rtti -c src/cxx.cpp -o "$TMP/cxx_$arch.o"
	touch -t 200001010000 "$TMP/cxx_$arch.o"
	$CC $T $OSO -Wl,-e,_main "$PWD/$TMP/cxx_$arch.o" -o cxx_$arch
	$CC $T -O1 -fobjc-runtime=macosx-11 -Wl,-e,_main src/objc.m src/objcstub.c -o objc_$arch
done
# A second arm64 dylib with local functions: images/dyldcachetest lays it
# out with libdemo in one synthetic dyld shared cache.
$CC -target arm64-apple-macos11 -fuse-ld=lld -nostdlib -O2 -dynamiclib -Wl,-install_name,@rpath/libtwo.dylib src/libtwo.c -o libtwo_arm64.dylib
# The dSYM's Info.plist is not needed and dsymutil writes the date into it.
rm -f prog_*.dSYM/Contents/Info.plist
# A universal (fat) binary of both architectures.
$LIPO -create prog_arm64 prog_x86_64 -output prog_universal
ls -l
