#!/usr/bin/env bash
# Installs the tools macprof's tests and benchmarks use, on Debian/Ubuntu:
# compilers (gcc, g++ for the C++ symbolize oracle) and linkers for test targets and Mach-O
# fixtures, the oracles the tests compare against (eu-stack, llvm-symbolizer, llvm-nm,
# llvm-objdump, gdb, perf), programs built without frame pointers that unwind tests profile
# (python3, sqlite3), and node, which runs the SVG flame graph's inline script in its tests; headless
# Chromium and the speedscope npm package, in which a test opens record's speedscope output.
set -euo pipefail
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"
need=()
for pair in gcc:gcc g++:g++ clang:clang ld64.lld-14:lld-14 eu-stack:elfutils llvm-symbolizer:llvm \
            llvm-otool-14:llvm-14 llvm-objdump-14:llvm-14 dsymutil:llvm gdb:gdb perf:linux-perf node:nodejs \
            python3:python3 sqlite3:sqlite3 npm:npm chromium-headless-shell:chromium-headless-shell; do
  cmd=${pair%%:*} pkg=${pair#*:}
  command -v "$cmd" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v staticcheck >/dev/null 2>&1 || go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The version cmd/macprof's TestRecordSpeedscopeShowsWhenThreadsRan looks for (openInSpeedscope).
speedscope="$HOME/.cache/macprof/speedscope"
[ -f "$speedscope/node_modules/speedscope/dist/release/index.html" ] ||
  npm install --silent --no-audit --no-fund --prefix "$speedscope" speedscope@1.25.0 >/dev/null
go version
