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
// pages gone must give ErrFault (Bytes under RecoverFault, and ReadAt),
// not crash the program.
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
	got := make([]byte, len(want))
	if n, err := m.ReadAt(got, 0); n != len(want) || err != nil || !bytes.Equal(got, want) {
		t.Fatalf("ReadAt of the whole file: %d bytes, %v", n, err)
	}
	if err := file.Truncate(4096); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ReadAt(got, 0); !errors.Is(err, ErrFault) {
		t.Errorf("ReadAt past the truncated end: %v, want ErrFault", err)
	}
	sum := func() (s int, err error) {
		defer RecoverFault(&err, PanicOnFault())
		b, err := m.Bytes(0, uint64(len(want)))
		if err != nil {
			return 0, err
		}
		for _, c := range b {
			s += int(c)
		}
		return s, nil
	}
	if _, err := sum(); !errors.Is(err, ErrFault) {
		t.Errorf("read of Bytes past the truncated end: %v, want ErrFault", err)
	}
	// The first page is still there, and a later read is not refused.
	if n, err := m.ReadAt(got[:4096], 0); n != 4096 || err != nil || !bytes.Equal(got[:4096], want[:4096]) {
		t.Errorf("ReadAt of the page left: %d bytes, %v", n, err)
	}
}

// TestMappingBounds checks that Bytes and ReadAt stay inside the mapping
// and its budget.
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
	if _, err := m.ReadAt(make([]byte, 10), 101); err == nil {
		t.Error("ReadAt past the end: no error")
	}
}
