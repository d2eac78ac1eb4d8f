//go:build !linux

package record

import "os"

// fromTerminal reports false: outside Linux every signal is passed on.
func fromTerminal(pid int, sig os.Signal) bool { return false }
