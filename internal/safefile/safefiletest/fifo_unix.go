//go:build unix

package safefiletest

import (
	"path/filepath"
	"syscall"
	"testing"
)

// FIFO makes a FIFO named name in a new temporary directory and returns its
// path.
func FIFO(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
