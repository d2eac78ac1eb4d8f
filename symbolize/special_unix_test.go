//go:build unix

package symbolize

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSymbolizeRefusesSpecialFiles: a FIFO (which no one writes) or a
// directory named as the binary is refused at once, saying what it is,
// rather than waited on or read as a short file.
func TestSymbolizeRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "a FIFO", dir: "a directory"} {
		done := make(chan error, 1)
		go func() { done <- Run(Config{Binary: path}, []string{"0x1"}, nil, &bytes.Buffer{}) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file ("+kind+")") || !strings.Contains(err.Error(), path) {
				t.Errorf("%s: err %v, want one naming it and saying it is not a regular file (%s)", path, err, kind)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Run still waiting after 10 s", path)
		}
	}
}
