//go:build !linux

package main

// raisePriority does nothing outside Linux.
func raisePriority() {}

// prepareForSampling changes nothing outside Linux (measured only there).
func prepareForSampling() (restore func()) { return func() {} }

// tuneForSampling changes nothing outside Linux (measured only there).
func tuneForSampling() (restore func()) { return func() {} }
