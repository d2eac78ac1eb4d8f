//go:build unix

package objfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestMappingFaultIsError truncates a file under its mapping: reading the
// pages gone through Bytes under RecoverFault must give ErrFault, not
// crash the program, and the page left still reads.
func TestMappingFaultIsError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	want := bytes.Repeat([]byte("macprof!"), 3*4096/8)
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	m, err := Map(file, int64(len(want)), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b, err := m.Bytes(0, uint64(len(want)))
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("Bytes of the whole file: %v", err)
	}
	if err := file.Truncate(4096); err != nil {
		t.Fatal(err)
	}
	copyOut := func(n int) (got []byte, err error) {
		defer RecoverFault(&err, PanicOnFault())
		return bytes.Clone(b[:n]), nil
	}
	if _, err := copyOut(len(want)); !errors.Is(err, ErrFault) {
		t.Errorf("read of Bytes past the truncated end: %v, want ErrFault", err)
	}
	if got, err := copyOut(4096); err != nil || !bytes.Equal(got, want[:4096]) {
		t.Errorf("read of the page left: %v", err)
	}
	// Outside a fault, RecoverFault lets other panics go on.
	defer func() {
		if r := recover(); r != "other" {
			t.Errorf("panic %v, want the one raised", r)
		}
	}()
	func() (err error) {
		defer RecoverFault(&err, PanicOnFault())
		panic("other")
	}()
}

// TestMappingBounds checks that Bytes stays inside the mapping and its
// budget.
func TestMappingBounds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := Map(file, 0, 100); err == nil {
		t.Error("Map of 0 bytes: no error")
	}
	m, err := Map(file, 100, 150)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, c := range []struct{ off, n uint64 }{{0, 101}, {100, 1}, {1 << 63, 1 << 63}, {^uint64(0), 2}} {
		if _, err := m.Bytes(c.off, c.n); !errors.Is(err, ErrBadSize) {
			t.Errorf("Bytes(%d, %d): %v, want ErrBadSize", c.off, c.n, err)
		}
	}
	if b, err := m.Bytes(0, 100); err != nil || len(b) != 100 || cap(b) != 100 {
		t.Fatalf("Bytes(0, 100): %d bytes (cap %d), %v", len(b), cap(b), err)
	}
	if _, err := m.Bytes(0, 51); !errors.Is(err, ErrBadSize) {
		t.Errorf("Bytes over the budget: %v, want ErrBadSize", err)
	}
}
