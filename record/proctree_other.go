//go:build !(linux && (amd64 || arm64))

package record

// processTree returns nil: outside Linux a launched command's children are
// not followed yet, only the command itself is recorded.
func processTree() func(root int, dst []int) []int { return nil }
