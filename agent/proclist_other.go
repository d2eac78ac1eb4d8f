//go:build !linux && !darwin

package agent

// listProcesses is not implemented on this OS.
func listProcesses() []Process { return nil }
