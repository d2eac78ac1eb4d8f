//go:build !linux

package main

// hugeHeap is for Linux's transparent huge pages (symbolize_heap_linux.go).
func hugeHeap() {}
