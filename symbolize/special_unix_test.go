//go:build unix

package symbolize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/testprog"
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

// truncateOnRead is a reader of addresses that first truncates the binary
// being symbolized, as a file replaced in place under the command would be.
type truncateOnRead struct {
	t    *testing.T
	path string
	r    io.Reader
	done bool
}

func (r *truncateOnRead) Read(p []byte) (int, error) {
	if !r.done {
		r.done = true
		if err := os.Truncate(r.path, 0); err != nil {
			r.t.Fatal(err)
		}
	}
	return r.r.Read(p)
}

// TestSymbolizeFileTruncatedUnderIt checks that an ELF file truncated
// after its table was built, whose names are read in place from its
// mapping, gives an error naming it, not a crash (SIGBUS).
func TestSymbolizeFileTruncatedUnderIt(t *testing.T) {
	src := filepath.Join(testprog.Dir(), "farsection.c")
	bin := filepath.Join(t.TempDir(), "far")
	if out, err := exec.Command(tool(t, "gcc"), "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	var in bytes.Buffer
	for _, a := range funcAddrs(t, bin, "", 1) {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	var out bytes.Buffer
	err := Run(Config{Binary: bin}, nil, &truncateOnRead{t: t, path: bin, r: &in}, &out)
	if !errors.Is(err, objfile.ErrFault) || !strings.Contains(err.Error(), bin) {
		t.Errorf("err %v, want objfile.ErrFault naming %s (output %.200q)", err, bin, out.String())
	}
}

// truncateOnSecondRead is a reader of two batches of addresses that
// truncates the binary before it gives the second, once the first was
// answered with the binary whole.
type truncateOnSecondRead struct {
	t             *testing.T
	path          string
	first, second []byte
	reads         int
}

func (r *truncateOnSecondRead) Read(p []byte) (int, error) {
	r.reads++
	switch r.reads {
	case 1:
		return copy(p, r.first), nil
	case 2:
		if err := os.Truncate(r.path, 0); err != nil {
			r.t.Fatal(err)
		}
		return copy(p, r.second), nil
	}
	return 0, io.EOF
}

// TestSymbolizeMachOTruncatedUnderIt checks that a Go Mach-O file
// truncated after its line tables were read, in place from its mapping,
// gives an error naming it, not a crash (SIGBUS).
func TestSymbolizeMachOTruncatedUnderIt(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"main.go": goProg, "go.mod": "module prog\n\ngo 1.21\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "prog")
	cmd := exec.Command(tool(t, "go"), "build", "-ldflags=-w", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off", "GOOS=darwin", "GOARCH=arm64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := images.OpenMachO(bin, "")
	if err != nil {
		t.Fatal(err)
	}
	var text images.MachOSection
	for _, s := range f.Sections {
		if s.Name == "__text" {
			text = s
		}
	}
	f.Close()
	// The first batch's addresses lie in __text's first half, the
	// second's in its second half, in functions whose tables the first
	// did not read.
	var first, second bytes.Buffer
	for a := text.Addr + 0x1000; a < text.Addr+text.Size; a += 0x400 {
		w := &first
		if a >= text.Addr+text.Size/2 {
			w = &second
		}
		fmt.Fprintf(w, "%#x\n", a)
	}
	var out bytes.Buffer
	err = Run(Config{Binary: bin}, nil, &truncateOnSecondRead{t: t, path: bin, first: first.Bytes(), second: second.Bytes()}, &out)
	if !errors.Is(err, objfile.ErrFault) || !strings.Contains(err.Error(), bin) {
		t.Errorf("err %v, want objfile.ErrFault naming %s (output %.200q)", err, bin, out.String())
	}
	if !strings.Contains(out.String(), ".go:") {
		t.Errorf("the first batch has no lines: %.200q", out.String())
	}
}
