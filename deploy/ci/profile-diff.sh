#!/usr/bin/env bash
# Profile regression check of two commits: builds a workload at each, records
# it RUNS times a side with `macprof record` (interleaved, so that both see the
# same load), profiles a Go benchmark package with `go test -cpuprofile` the
# same way, and compares each pair of sides with `macprof diff`. The markdown
# reports go to OUT/summary.md (the workflow appends it to the job summary);
# the exit status is the worse of the two comparisons: 0 no significant
# regression, 1 regression, 2 usage or input error.
#
#   deploy/ci/profile-diff.sh BASE_COMMIT HEAD_COMMIT OUT
#
# Run it from the repository's checkout. Environment (defaults in brackets):
#   MACPROF     the macprof binary [macprof on PATH]
#   RECORD_PKG  the program macprof records, a package of the repository [./bench/demo]
#   RECORD_ARGS its arguments [-threads 2 -duration 5s]
#   BENCH_PKG   the Go benchmark package [./diff]
#   BENCH_TIME  go test -benchtime [3s]; a count (20x) fixes the work a run does
#   BENCH_FAIL_ON  macprof diff --fail-on for the benchmark [its default, which
#               with a count adds time:+10%, a function's own time per run, as
#               the go test outputs beside the profiles show the fixed work]
#   RUNS        recordings and benchmark runs a side [5]
# Recording needs ptrace permission: as another user than root the script
# runs `macprof record` with sudo (setup-go's go is not needed under sudo).
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 BASE_COMMIT HEAD_COMMIT OUT" >&2
  exit 2
fi
base_commit=$1 head_commit=$2 out=$3
macprof=${MACPROF:-$(command -v macprof || true)}
if [ -z "$macprof" ] || [ ! -x "$macprof" ]; then
  echo "profile-diff: no macprof binary (set MACPROF or put macprof on PATH)" >&2
  exit 2
fi
macprof=$(cd "$(dirname "$macprof")" && pwd)/$(basename "$macprof")
record_pkg=${RECORD_PKG:-./bench/demo}
read -r -a record_args <<<"${RECORD_ARGS:--threads 2 -duration 5s}"
bench_pkg=${BENCH_PKG:-./diff}
bench_time=${BENCH_TIME:-3s}
bench_fail_on=()
if [ -n "${BENCH_FAIL_ON:-}" ]; then bench_fail_on=(--fail-on "$BENCH_FAIL_ON"); fi
runs=${RUNS:-5}
sudo=""
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
trees=$(mktemp -d)
cleanup() {
  for side in base head; do
    git worktree remove --force "$trees/$side" 2>/dev/null || true
  done
  rm -rf "$trees"
}
trap cleanup EXIT

# Each commit in a worktree of its own; go -C must be go's first flag.
for side in base head; do
  commit=$base_commit
  if [ $side = head ]; then commit=$head_commit; fi
  git worktree add -q --detach "$trees/$side" "$commit"
  go -C "$trees/$side" build -o "$trees/$side-prog" "$record_pkg"
  mkdir -p "$out/record-$side" "$out/gotest-$side"
done

for i in $(seq "$runs"); do
  for side in base head; do
    $sudo "$macprof" record -q -F 99 -o "$out/record-$side/$i.pb.gz" -- "$trees/$side-prog" "${record_args[@]}"
    # The benchmark's text output stays beside the profile: macprof diff
    # reads a directory's profiles by content and lists the rest as skipped.
    go -C "$trees/$side" test -run '^$' -bench . -benchtime "$bench_time" \
      -cpuprofile "$out/gotest-$side/$i.pprof" "$bench_pkg" >"$out/gotest-$side/$i.txt"
  done
done
if [ -n "$sudo" ]; then $sudo chown -R "$(id -u):$(id -g)" "$out"; fi

status=0
: >"$out/summary.md"
"$macprof" diff --format markdown -o "$out/diff.svg" -o "$out/diff.pb.gz" -o "$out/diff.json" \
  "$out/record-base" "$out/record-head" >>"$out/summary.md" || status=$?
echo >>"$out/summary.md"
s=0
"$macprof" diff --format markdown "${bench_fail_on[@]}" "$out/gotest-base" "$out/gotest-head" >>"$out/summary.md" || s=$?
if [ $s -gt $status ]; then status=$s; fi
exit $status
