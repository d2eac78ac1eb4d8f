//go:build !linux

package main

// raisePriority does nothing outside Linux.
func raisePriority() {}
