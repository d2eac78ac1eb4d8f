//go:build linux

package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// listProcesses returns every process with its user, its short name
// (comm), the base name of its executable and its command line, from /proc.
func listProcesses() []Process {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []Process
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := "/proc/" + e.Name() + "/"
		comm, err := os.ReadFile(dir + "comm")
		if err != nil {
			continue // exited meanwhile
		}
		p := Process{PID: pid, Names: []string{string(bytes.TrimSpace(comm))}}
		p.UID, p.HasUID = processOwner(pid)
		if exe, err := os.Readlink(dir + "exe"); err == nil {
			p.Names = append(p.Names, filepath.Base(exe))
		}
		if cl, err := os.ReadFile(dir + "cmdline"); err == nil && len(cl) > 0 {
			p.Cmdline = string(bytes.TrimRight(bytes.ReplaceAll(cl, []byte{0}, []byte{' '}), " "))
		}
		out = append(out, p)
	}
	return out
}

// processOwner returns the user pid runs as, from the Uid line of
// /proc/PID/status (real, effective, saved and filesystem ids): ok only
// when the first three are the same.
func processOwner(pid int) (uid int, ok bool) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for line := range bytes.SplitSeq(status, []byte{'\n'}) {
		rest, found := bytes.CutPrefix(line, []byte("Uid:"))
		if !found {
			continue
		}
		ids := bytes.Fields(rest)
		if len(ids) < 3 || !bytes.Equal(ids[0], ids[1]) || !bytes.Equal(ids[0], ids[2]) {
			return 0, false
		}
		uid, err := strconv.Atoi(string(ids[0]))
		return uid, err == nil
	}
	return 0, false
}
