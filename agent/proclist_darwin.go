//go:build darwin

package agent

import (
	"bytes"

	"golang.org/x/sys/unix"
)

// listProcesses returns every process with its user and short name, from
// the kern.proc.all sysctl.
func listProcesses() []Process {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	out := make([]Process, 0, len(procs))
	for i := range procs {
		p := &procs[i]
		comm := p.Proc.P_comm[:]
		if i := bytes.IndexByte(comm, 0); i >= 0 {
			comm = comm[:i]
		}
		uid, ok := kinfoOwner(p)
		out = append(out, Process{PID: int(p.Proc.P_pid), Names: []string{string(comm)}, UID: uid, HasUID: ok})
	}
	return out
}

// processOwner returns the user pid runs as, from the kern.proc.pid sysctl.
func processOwner(pid int) (uid int, ok bool) {
	p, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(p.Proc.P_pid) != pid {
		return 0, false
	}
	return kinfoOwner(p)
}

// kinfoOwner returns the user of a process: ok only when its real,
// effective and saved user ids are the same.
func kinfoOwner(p *unix.KinfoProc) (uid int, ok bool) {
	r, e, s := p.Eproc.Pcred.P_ruid, p.Eproc.Ucred.Uid, p.Eproc.Pcred.P_svuid
	return int(r), r == e && r == s
}
