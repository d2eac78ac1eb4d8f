#!/usr/bin/env bash
# Records interpreters built without frame pointers (a g++ -O2 tree-walking
# interpreter, lua5.4, ruby, perl) with macprof's default unwind, ROUNDS
# times each, and prints the share of samples whose stack is a lone
# [truncated] frame (no caller found) and the share with [truncated]
# anywhere. Usage: bench/lone/run.sh [ROUNDS] (from the repository root;
# needs g++, lua5.4, ruby, perl).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/macprof" ./cmd/macprof
g++ -O2 -o "$tmp/interp" bench/lone/interp.cpp
share() {
  awk '{n=$NF; if ($1 ~ /^\[(lost|unsampled)/) next; t+=n; split($1,a,";"); if (a[1]=="[truncated]" && length(a)<=2) l+=n; if ($1 ~ /\[truncated\]/) tr+=n}
       END {printf "%5d samples, lone [truncated] %.2f%%, [truncated] anywhere %.2f%%\n", t, 100*l/t, 100*tr/t}' "$1"
}
for r in $(seq "$rounds"); do
  for cmd in "$tmp/interp 6000000" "lua5.4 bench/lone/bench.lua" "ruby bench/lone/bench.rb" "perl bench/lost/busy.pl"; do
    "$tmp/macprof" record -q -F 999 -o "$tmp/p.folded" -- $cmd >/dev/null
    printf "round %d %-8s " "$r" "$(basename "${cmd%% *}")"
    share "$tmp/p.folded"
  done
done
