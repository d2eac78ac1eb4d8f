//go:build linux && (amd64 || arm64)

package main

import "github.com/macprof/macprof/ptrace"

// processTree finds the processes a launched command started.
type processTree = ptrace.ProcessTree
