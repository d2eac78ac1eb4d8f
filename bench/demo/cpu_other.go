//go:build !linux

package main

import "time"

// threadCPU reports that this platform's per-thread CPU time is not read.
func threadCPU() (user, sys time.Duration, ok bool) { return 0, 0, false }

// processCPU reports that this platform's process CPU time is not read.
func processCPU() (time.Duration, bool) { return 0, false }

// parentCPU reports that this platform's parent CPU time is not read.
func parentCPU() (time.Duration, bool) { return 0, false }
