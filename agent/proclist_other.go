//go:build !linux && !darwin

package agent

// listProcesses is not implemented on this OS.
func listProcesses() []Process { return nil }

// processOwner is not implemented on this OS: no user is known.
func processOwner(int) (uid int, ok bool) { return 0, false }
