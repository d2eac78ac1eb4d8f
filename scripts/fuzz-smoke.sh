#!/usr/bin/env bash
# Runs every fuzz target in the module for a short time each (default 10s).
#
# Go 1.26's fuzz coordinator can fail a duration-bounded run with a bare
# "context deadline exceeded" at the end of -fuzztime, a race in the
# coordinator itself (go.dev/issue/75804, fixed in Go 1.27) rather than a
# failing input: such a run writes no reproducer. A failure that wrote no
# new file under testdata/fuzz/<target>/ and printed only that line is
# reported and the target run again; a second such failure, or any failure
# with a reproducer or another message, fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-10s}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# corpus lists the files in a target's corpus directory.
corpus() { ls "$1" 2>/dev/null | sort || true; }

for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)\(' "$dir"/*_test.go 2>/dev/null | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/' | sort -u); do
    for attempt in 1 2; do
      echo "fuzz $pkg $f ($t)"
      before=$(corpus "$dir/testdata/fuzz/$f")
      if go test -run '^$' -fuzz "^$f\$" -fuzztime "$t" "$pkg" 2>&1 | tee "$out"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
        break
      fi
      after=$(corpus "$dir/testdata/fuzz/$f")
      if [ "$attempt" -eq 1 ] && [ "$before" = "$after" ] &&
        grep -qx '    context deadline exceeded' "$out" &&
        ! grep -qE 'Failing input written|panic:|--- FAIL: .*\(.*\)$' <(grep -v "^--- FAIL: $f " "$out"); then
        echo "fuzz $pkg $f: the coordinator's deadline race (go.dev/issue/75804), no reproducer written: running it again"
        continue
      fi
      echo "fuzz $pkg $f failed" >&2
      exit 1
    done
  done
done
