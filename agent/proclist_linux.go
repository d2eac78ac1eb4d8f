//go:build linux

package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// listProcesses returns every process with its short name (comm), the base
// name of its executable and its command line, from /proc.
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
