#!/usr/bin/env bash
# The main job: builds macprof and the bundled demo workload, records the
# workload (or the command given as arguments) for a few seconds, and writes
# a pprof profile and an SVG flame graph to ./out/.
#   scripts/demo.sh                 # profile the bundled demo workload
#   scripts/demo.sh -- CMD ARGS...  # profile your own command
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"
mkdir -p out
go build -o out/macprof ./cmd/macprof
go build -o out/demo ./bench/demo
if [ "${1:-}" = "--" ]; then shift; else set -- out/demo -threads 2 -duration 5s; fi
out/macprof record -F 99 -o out/profile.pb.gz -o out/flame.svg -o out/profile.folded -- "$@"
echo "wrote out/profile.pb.gz (go tool pprof -top out/profile.pb.gz), out/flame.svg (open in a browser), out/profile.folded"
