//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSymbolizeGrowsItsPipe checks that symbolize reading addresses from
// a pipe asks for a 1 MiB pipe (so that a writer gets that far ahead and
// the batches are that large), where the system allows it, and answers
// as before.
func TestSymbolizeGrowsItsPipe(t *testing.T) {
	want := symbolizePipeBytes
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err != nil {
		t.Fatal(err)
	} else if limit, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
		t.Fatal(err)
	} else if limit < want && os.Geteuid() != 0 {
		want = 64 << 10 // refused: the default stays
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.WriteString("0x100000388\n0x1000003b8\n")
		w.Close()
	}()
	old := symbolizeStdin
	symbolizeStdin = r
	defer func() { symbolizeStdin = old }()
	var out, errb bytes.Buffer
	uni := filepath.Join(machoFixtures, "prog_universal")
	if st := run([]string{"symbolize", "-o", uni, "--arch", "arm64"}, &out, &errb); st != 0 {
		t.Fatalf("status %d: %s", st, errb.String())
	}
	if got := out.String(); got != "func_10 (in prog_universal) + 0\nfunc_10 (in prog_universal) + 48\n" {
		t.Errorf("output %q", got)
	}
	size, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	if size != want {
		t.Errorf("pipe of %d bytes, want %d", size, want)
	}
}
