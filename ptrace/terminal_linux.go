package ptrace

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// FromTerminal reports whether sig is a Ctrl-C that process pid got from
// its terminal too: it is in the terminal's foreground process group.
func FromTerminal(pid int, sig os.Signal) bool {
	if sig != os.Interrupt {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(b, ')')
	if err != nil || i < 0 {
		return false
	}
	// After the name: state, ppid, pgrp, session, tty_nr, tpgid.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 6 {
		return false
	}
	pgrp, err1 := strconv.Atoi(f[2])
	tpgid, err2 := strconv.Atoi(f[5])
	return err1 == nil && err2 == nil && tpgid > 0 && pgrp == tpgid
}
