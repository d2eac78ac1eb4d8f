package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/macprof/macprof/internal/agentcmd"
	"github.com/macprof/macprof/target"
)

// runAgent is macprof agent run in the test's own process, over osBackend
// (which the darwin model tests replace): the macprof binary would replace
// the test process with macprof-agent instead.
func runAgent(args []string, stdout, stderr io.Writer) int {
	return agentcmd.Run(args, stdout, stderr, func(pid int, o target.Options) (target.Target, error) { return osBackend.Attach(pid, o) })
}

func init() {
	c := commands["agent"]
	c.run = runAgent
	commands["agent"] = c
}

// TestFindAgent finds macprof-agent beside macprof (through a symbolic
// link to macprof) before PATH, and says how to install it when it is in
// neither place.
func TestFindAgent(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	self := filepath.Join(dir, "macprof")
	for _, f := range []string{self, filepath.Join(other, agentBinary)} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(other, "macprof")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	onPath := func(string) (string, error) { return filepath.Join(other, agentBinary), nil }
	notOnPath := func(string) (string, error) { return "", &exec.Error{Name: agentBinary, Err: exec.ErrNotFound} }

	if got, err := findAgent(func() (string, error) { return link, nil }, onPath); err != nil || got != filepath.Join(other, agentBinary) {
		t.Errorf("none beside macprof: got %q, %v; want the one on PATH", got, err)
	}
	beside := filepath.Join(dir, agentBinary)
	if err := os.WriteFile(beside, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := findAgent(func() (string, error) { return link, nil }, onPath); err != nil || got != beside {
		t.Errorf("beside macprof (run through a link): got %q, %v; want %s", got, err, beside)
	}
	if err := os.Chmod(beside, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := findAgent(func() (string, error) { return self, nil }, notOnPath)
	if err == nil || !strings.Contains(err.Error(), "go install github.com/macprof/macprof/cmd/macprof-agent@latest") || !strings.Contains(err.Error(), "beside "+self) {
		t.Errorf("not executable beside, none on PATH: err = %v, want how to install it", err)
	}
}
