package pyroscopetest

import (
	"os"
	"path/filepath"
	"testing"
)

// MACPROF_SHARED names the shared folder outright; without it the folder
// found, if any, holds pyroscope/start.sh.
func TestSharedDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MACPROF_SHARED", dir)
	if got := SharedDir(); got != dir {
		t.Errorf("SharedDir with MACPROF_SHARED=%s: %q", dir, got)
	}
	t.Setenv("MACPROF_SHARED", "")
	if got := SharedDir(); got != "" {
		if _, err := os.Stat(filepath.Join(got, "pyroscope", "start.sh")); err != nil {
			t.Errorf("SharedDir found %q without pyroscope/start.sh: %v", got, err)
		}
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Errorf("module root %s has no go.mod", root)
	}
}
