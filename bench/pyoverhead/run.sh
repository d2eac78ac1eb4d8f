#!/bin/bash
# The cost of profiling Debian's python3 (no frame pointers): macprof record
# (unwind tables over stack copies) beside perf record --call-graph dwarf, in
# one run, on two python3 workers that hash 4 KiB blocks and keep both CPUs
# busy. For each configuration it prints the workers' work units per second,
# the share of their time on a CPU, and the profiler's own CPU time (user +
# system of the profiler and its children, less the workers' own).
#
# The interpreter is Debian's /usr/bin/python3 unless PYTHON names another:
# a bare `python3` may be a pyenv shim (a bash script) in front of a python
# built with debug info, which measures the symbolization of its DWARF more
# than the sampling.
#
# usage: [PYTHON=...] bench/pyoverhead/run.sh [RATE] [SECONDS] [ROUNDS]   (from the repository root, as root)
set -euo pipefail
rate=${1:-999} dur=${2:-5} rounds=${3:-4}
py=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || { echo "$py not found: apt-get install python3, or set PYTHON" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/macprof" ./cmd/macprof
command -v perf >/dev/null || { echo "perf not found: apt-get install linux-perf" >&2; exit 1; }

# one NAME PREFIX...: runs the workers under PREFIX and prints one line.
one() {
	local name=$1
	shift
	local out=$dir/out tf=$dir/time
	/usr/bin/time -f '%U %S' -o "$tf" "$@" bash -c "$py $here/worker.py $dur & $py $here/worker.py $dur & wait" >"$out" 2>/dev/null
	read -r u s <"$tf"
	awk -v name="$name" -v tot="$(echo "$u + $s" | bc)" -v dur="$dur" '/^W/ {ups+=$2; cpu+=$3; wall+=$4} END {
		printf "%-28s units/s %8.1f  workers on CPU %6.2f%%  profiler CPU %6.3f s = %5.2f%% of a core\n", name, ups, 100*cpu/wall, tot-cpu, 100*(tot-cpu)/dur}' "$out"
}

for r in $(seq "$rounds"); do
	echo "round $r"
	one "alone"
	one "macprof record -F $rate" "$dir/macprof" record -q -F "$rate" -o "$dir/p.pb.gz" --
	one "perf --call-graph dwarf -F $rate" perf record -q --call-graph dwarf -F "$rate" -o "$dir/perf.data" --
done
# The profile macprof wrote in the last round: the share of samples whose
# stack reaches main, so that a broken unwind cannot look cheap.
go run ./bench/pyoverhead/reach "$dir/p.pb.gz"
