//go:build !linux

package main

// raisePriority does nothing outside Linux.
func raisePriority() {}

// tuneForSampling changes nothing outside Linux (measured only there).
func tuneForSampling() (restore func()) { return func() {} }
