//go:build darwin

package agent

import (
	"bytes"

	"golang.org/x/sys/unix"
)

// listProcesses returns every process with its short name, from the
// kern.proc.all sysctl.
func listProcesses() []Process {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	out := make([]Process, 0, len(procs))
	for _, p := range procs {
		comm := p.Proc.P_comm[:]
		if i := bytes.IndexByte(comm, 0); i >= 0 {
			comm = comm[:i]
		}
		out = append(out, Process{PID: int(p.Proc.P_pid), Names: []string{string(comm)}})
	}
	return out
}
