//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestRawFileReadsAWholeFile(t *testing.T) {
	want := bytes.Repeat([]byte("0123456789abcdef\n"), 10000) // 170 KB: many reads
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := openRawFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, err %v; want the file's %d", len(got), err, len(want))
	}
	if _, err := openRawFile(filepath.Join(t.TempDir(), "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of a missing file: %v, want ErrNotExist", err)
	}
}

func TestReadRegionsOfThisProcess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	regs, err := readRegions(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		if r.Executable() && r.Path == exe {
			return
		}
	}
	t.Fatalf("no executable mapping of %s among %d regions", exe, len(regs))
}
