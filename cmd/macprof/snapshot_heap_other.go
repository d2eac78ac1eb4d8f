//go:build !linux

package main

// hugeHeapAhead is for Linux's transparent huge pages
// (snapshot_heap_linux.go).
func hugeHeapAhead() {}
