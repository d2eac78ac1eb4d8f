//go:build !linux

package main

// descendants is not implemented outside Linux yet: only the launched
// process itself is recorded.
func descendants(root int) []int { return nil }
