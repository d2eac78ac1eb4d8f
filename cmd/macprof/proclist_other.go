//go:build !linux && !darwin

package main

// listProcesses is not implemented on this OS.
func listProcesses() []procEntry { return nil }
