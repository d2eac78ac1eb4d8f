//go:build linux

package main

import "github.com/macprof/macprof/ptrace"

// processTree finds the processes a launched command started.
type processTree = ptrace.ProcessTree
