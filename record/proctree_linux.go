//go:build linux && (amd64 || arm64)

package record

import "github.com/macprof/macprof/ptrace"

// processTree returns a function that lists a process's descendants from
// /proc.
func processTree() func(root int, dst []int) []int { return new(ptrace.ProcessTree).Descendants }
