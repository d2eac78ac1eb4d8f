#!/bin/bash
# The cost of profiling Debian's python3 (no frame pointers): macprof record
# (unwind tables over stack copies) beside perf record --call-graph dwarf, in
# one run, on two python3 workers that hash 4 KiB blocks and keep both CPUs
# busy. For each configuration it prints the workers' work units per second,
# the share of their time on a CPU, and the profiler's own CPU time (user +
# system of the profiler and its children, less the workers' own) in all and
# while the workers ran (what the profiler's threads used meanwhile, as
# each worker reads it: all that it can take from them). Each
# round runs the workers alone twice (the second run, a control, shows the
# measurement's noise) and under each profiler at each rate, in an order
# rotated round by round; the summary gives each configuration's median
# run-time loss (1 - the workers' share on a CPU / the same in the round's
# first run alone) and profiler CPU, in all and while the workers ran.
#
# The interpreter is Debian's /usr/bin/python3 unless PYTHON names another:
# a bare `python3` may be a pyenv shim (a bash script) in front of a python
# built with debug info, which measures the symbolization of its DWARF more
# than the sampling.
#
# usage: [PYTHON=...] [BEFORE=macprof-binary] bench/pyoverhead/run.sh [RATES] [SECONDS] [ROUNDS]   (from the repository root, as root)
# RATES is one rate in Hz or several with commas: 99,999. BEFORE, a macprof
# built from an earlier commit, adds its runs at each rate: a before/after
# in one run.
set -euo pipefail
rates=${1:-999} dur=${2:-5} rounds=${3:-4}
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
	awk -v name="$name" -v tot="$(echo "$u + $s" | bc)" -v dur="$dur" -v round="$r" -v all="$dir/all" '/^W/ {ups+=$2; cpu+=$3; wall+=$4; during+=$5; n++} END {
		printf "%-34s units/s %8.1f  workers on CPU %6.2f%%  profiler CPU %6.3f s = %5.2f%% of a core, while they ran %6.1f ms\n", name, ups, 100*cpu/wall, tot-cpu, 100*(tot-cpu)/dur, 1000*during/n
		printf "%s\t%s\t%.6f\t%.6f\t%.6f\n", round, name, 100*cpu/wall, 100*(tot-cpu)/dur, 1000*during/n >>all}' "$out"
}

# config N runs the Nth configuration of the round.
configs=("alone" "alone (control)")
for rate in ${rates//,/ }; do
	configs+=("macprof record -F $rate" "perf --call-graph dwarf -F $rate")
	[ -z "${BEFORE:-}" ] || configs+=("before: macprof record -F $rate")
done
config() {
	local name=${configs[$1]} rate=${configs[$1]##* }
	case $name in
	alone*) one "$name" ;;
	macprof*) one "$name" "$dir/macprof" record -q -F "$rate" -o "$dir/p.pb.gz" -- ;;
	before*) one "$name" "$BEFORE" record -q -F "$rate" -o "$dir/before.pb.gz" -- ;;
	perf*) one "$name" perf record -q --call-graph dwarf -F "$rate" -o "$dir/perf.data" -- ;;
	esac
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
n=${#configs[@]}
for r in $(seq "$rounds"); do
	echo "round $r"
	for k in $(seq 0 $((n - 1))); do
		config $(((k + r) % n))
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# Medians over the rounds: the loss against the same round's first run alone.
python3 - "$dir/all" "${configs[@]}" <<'EOF'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
alone = {r: float(on) for r, name, on, _, _ in rows if name == "alone"}
print("median over %d rounds [min, max]: run-time loss = 1 - workers on CPU / the round's first run alone; profiler CPU, %% of a core in all, ms while the workers ran" % len(alone))
for name in sys.argv[3:]:
    loss = [100 * (1 - float(on) / alone[r]) for r, n, on, _, _ in rows if n == name]
    cpu = [float(c) for _, n, _, c, _ in rows if n == name]
    during = [float(d) for _, n, _, _, d in rows if n == name]
    print("  %-34s run-time loss %6.2f%% [%.2f, %.2f]   profiler CPU %5.2f%%, while the workers ran %6.1f ms [%.1f, %.1f]" % (
        name, statistics.median(loss), min(loss), max(loss), statistics.median(cpu), statistics.median(during), min(during), max(during)))
EOF
# The profile macprof wrote in the last round: the share of samples whose
# stack reaches main, so that a broken unwind cannot look cheap.
go run ./bench/pyoverhead/reach "$dir/p.pb.gz"
