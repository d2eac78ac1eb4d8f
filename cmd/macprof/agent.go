package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

func init() {
	register(command{name: "agent", summary: "profile processes continuously and export to an OpenTelemetry collector or Pyroscope (runs macprof-agent)", run: runAgentBinary})
}

// agentBinary is the agent's executable, installed beside macprof.
const agentBinary = "macprof-agent"

// runAgentBinary replaces macprof with macprof-agent, given args: the
// agent keeps macprof's process (its PID for a service manager, its
// signals), and the other commands do not pay for the exporters it links.
func runAgentBinary(args []string, stdout, stderr io.Writer) int {
	path, err := findAgent(os.Executable, exec.LookPath)
	if err != nil {
		fmt.Fprintf(stderr, "macprof agent: %v\n", err)
		return 2
	}
	err = syscall.Exec(path, append([]string{path}, args...), os.Environ())
	fmt.Fprintf(stderr, "macprof agent: run %s: %v\n", path, err)
	return 1
}

// findAgent returns the path of macprof-agent: the one in the directory of
// the running macprof (through any symbolic link to it), else the first on
// PATH (where lookPath is not nil).
func findAgent(executable func() (string, error), lookPath func(string) (string, error)) (string, error) {
	self, err := executable()
	if err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		beside := filepath.Join(filepath.Dir(self), agentBinary)
		if st, err := os.Stat(beside); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	if lookPath != nil {
		if p, err := lookPath(agentBinary); err == nil {
			return p, nil
		} else if !errors.Is(err, exec.ErrNotFound) {
			return "", err
		}
	}
	where := "in PATH"
	if self != "" {
		where = "beside " + self + " or in PATH"
	}
	return "", fmt.Errorf("%s is not installed (looked %s); install it with\n  go install github.com/macprof/macprof/cmd/macprof-agent@latest\nor build it next to macprof: go build -o %s ./cmd/macprof-agent", agentBinary, where, filepath.Join(filepath.Dir(self), agentBinary))
}
