//go:build !(linux && (amd64 || arm64))

package record

import "errors"

// processTree returns nil: outside Linux a launched command's children are
// not followed yet, only the command itself is recorded.
func processTree() func(root int, dst []int) []int { return nil }

// settledWatch returns nil: outside Linux drains keep their usual ceiling.
func settledWatch() func() bool { return nil }

// watchExit is not available outside Linux: a target's exit is found at
// the next tick.
func watchExit(int, func()) (func(), error) {
	return nil, errors.New("watching a process for its exit is not implemented on this OS")
}
