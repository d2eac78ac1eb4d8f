//go:build linux

package main

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
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
	want := pipeBytesAllowed(t)
	r := pipeStdin(t, "0x100000388\n0x1000003b8\n")
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

// TestSymbolizeGrowsItsOutputPipe checks that symbolize answering a batch
// from a pipe into a pipe asks for a 1 MiB output pipe too (its writes of
// 256 KiB no longer wait for the reader four times each), where the
// system allows it, and answers as before.
func TestSymbolizeGrowsItsOutputPipe(t *testing.T) {
	want := pipeBytesAllowed(t)
	pipeStdin(t, "0x100000388\n0x1000003b8\n")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	var errb bytes.Buffer
	uni := filepath.Join(machoFixtures, "prog_universal")
	st := run([]string{"symbolize", "-o", uni, "--arch", "arm64"}, w, &errb)
	size, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0)
	w.Close()
	if st != 0 {
		t.Fatalf("status %d: %s", st, errb.String())
	}
	if out := <-got; out != "func_10 (in prog_universal) + 0\nfunc_10 (in prog_universal) + 48\n" {
		t.Errorf("output %q", out)
	}
	if err != nil {
		t.Fatal(err)
	}
	if size != want {
		t.Errorf("output pipe of %d bytes, want %d", size, want)
	}
}

// pipeBytesAllowed returns the size growPipe gets for a pipe: 1 MiB, or
// the default where the system's limit refuses it.
func pipeBytesAllowed(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/fs/pipe-max-size")
	if err != nil {
		t.Fatal(err)
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if limit < symbolizePipeBytes && os.Geteuid() != 0 {
		return 64 << 10 // refused: the default stays
	}
	return symbolizePipeBytes
}

// TestSymbolizeBatchWithoutCollection checks that a batch of 100,000
// addresses from a pipe runs with the collector off (no collection but
// hugeHeap's own), and that the collector's settings are back as they
// were after it. The test's own collector is off around it, so that
// setting them back starts none.
func TestSymbolizeBatchWithoutCollection(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const n = 100_000
	pipeStdin(t, strings.Repeat("0x1000003b8\n", n))
	var out, errb bytes.Buffer
	uni := filepath.Join(machoFixtures, "prog_universal")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st := run([]string{"symbolize", "-o", uni, "--arch", "arm64"}, &out, &errb)
	runtime.ReadMemStats(&after)
	if st != 0 {
		t.Fatalf("status %d: %s", st, errb.String())
	}
	if got := strings.Count(out.String(), "func_10 (in prog_universal) + 48\n"); got != n {
		t.Errorf("%d answers of %d", got, n)
	}
	if gcs := after.NumGC - before.NumGC; gcs > 1 {
		t.Errorf("%d collections during the batch, want at most hugeHeap's", gcs)
	}
	if pct := debug.SetGCPercent(-1); pct != -1 {
		t.Errorf("GOGC %d after the batch, want off as before", pct)
	}
	if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 {
		t.Errorf("memory limit %d after the batch, want none as before", limit)
	}
}

// pipeStdin makes a pipe that input is written to, then closed, the
// symbolize command's standard input until the test ends, and returns its
// read end.
func pipeStdin(t *testing.T, input string) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.WriteString(input)
		w.Close()
	}()
	old := symbolizeStdin
	symbolizeStdin = r
	t.Cleanup(func() {
		symbolizeStdin = old
		r.Close()
	})
	return r
}
