package ptrace

import (
	"os"

	"github.com/macprof/macprof/internal/procstat"
)

// FromTerminal reports whether sig is a Ctrl-C that process pid got from
// its terminal too: it is in the terminal's foreground process group.
func FromTerminal(pid int, sig os.Signal) bool {
	if sig != os.Interrupt {
		return false
	}
	s, err := procstat.Read(pid)
	return err == nil && s.Has(procstat.FieldTPGID) && s.TPGID > 0 && s.PGRP == s.TPGID
}
