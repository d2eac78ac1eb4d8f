#!/bin/sh
# Builds the CFI fixtures (clang 14 and lld, as scripts/install-deps.sh
# installs): freestanding static programs, amd64 and arm64, frames omitted,
# with their unwind tables in .eh_frame (eh_*) or in .debug_frame (debug_*).
set -eu
cd "$(dirname "$0")"
for arch in amd64 arm64; do
	case $arch in
	amd64) target=x86_64-linux-gnu ;;
	arm64) target=aarch64-linux-gnu ;;
	esac
	flags="-target $target -O2 -fomit-frame-pointer -ffreestanding -nostdlib -static -fuse-ld=lld -Wl,--build-id=sha1"
	clang $flags -fasynchronous-unwind-tables -o eh_$arch src/prog.c src/leaf_$arch.S
	clang $flags -g -fno-asynchronous-unwind-tables -fno-unwind-tables -o debug_$arch src/prog.c src/leaf_$arch.S
done
