#!/usr/bin/env bash
# The test command: every package's tests with the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"
go test -race -count=1 -timeout 30m ./...
