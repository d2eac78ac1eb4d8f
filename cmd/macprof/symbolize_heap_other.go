//go:build !linux

package main

import "os"

// hugeHeap is for Linux's transparent huge pages (symbolize_heap_linux.go).
func hugeHeap() {}

// growPipe is for Linux's pipe sizes (symbolize_pipe_linux.go).
func growPipe(*os.File) {}
