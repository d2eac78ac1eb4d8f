#!/usr/bin/env bash
# Runs every fuzz target in the module for a fixed number of executions each
# (default 100000), with a wall-clock ceiling per target (default 300 s).
#
# The budget is a count, not a duration: Go 1.26's coordinator can fail a
# duration-bounded run with a bare "context deadline exceeded" when -fuzztime
# expires (go.dev/issue/75804, fixed in Go 1.27), and it did so twice in a
# row for one target on a loaded CI machine. A count sets no deadline, so that
# race cannot happen; a slow or stuck target is stopped by the ceiling instead
# and fails the script, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
ceiling=${2:-300}

for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)\(' "$dir"/*_test.go 2>/dev/null | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/' | sort -u); do
    echo "fuzz $pkg $f (${n} executions)"
    start=$SECONDS
    rc=0
    timeout --signal=INT --kill-after=30 "$ceiling" \
      go test -run '^$' -fuzz "^$f\$" -fuzztime "${n}x" "$pkg" || rc=$?
    if [ "$rc" -eq 124 ]; then
      echo "fuzz $pkg $f: did not finish ${n} executions within ${ceiling} s" >&2
      exit 1
    elif [ "$rc" -ne 0 ]; then
      echo "fuzz $pkg $f failed (exit $rc); a failing input, if any, is under $dir/testdata/fuzz/$f" >&2
      exit 1
    fi
    echo "fuzz $pkg $f: $((SECONDS - start)) s"
  done
done
