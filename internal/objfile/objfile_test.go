package objfile_test

import (
	"debug/elf"
	"errors"
	"os"
	"testing"

	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/objfile/objfiletest"
	"github.com/macprof/macprof/internal/testprog"
)

// TestSparseELFRefused checks that the sections of a sparse file that claim
// gigabytes of holes are refused at the headers, with a few KB allocated,
// and that the real file they were patched from passes.
func TestSparseELFRefused(t *testing.T) {
	src := testprog.BuildC(t, "spinexit.c")
	sparse := objfiletest.SparseELF(t, src)
	file, err := os.Open(sparse)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	size, data, err := objfile.DataSize(file)
	if err != nil {
		t.Fatal(err)
	}
	if size < objfiletest.Above || data >= 1<<20 {
		t.Fatalf("DataSize: size %d, data %d; want over %d and under 1 MiB", size, data, objfiletest.Above)
	}
	var f *elf.File
	n := objfiletest.Allocated(func() { f, err = objfile.NewELF(file, 1<<30) })
	if !errors.Is(err, objfile.ErrBadSize) || f != nil {
		t.Fatalf("NewELF of the sparse file: %v, want ErrBadSize", err)
	}
	if n > 1<<20 {
		t.Errorf("refusing it allocated %d bytes", n)
	}
	t.Logf("%v (%d bytes allocated)", err, n)

	real, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	if _, err := objfile.NewELF(real, 1<<30); err != nil {
		t.Fatalf("NewELF of the real file: %v", err)
	}
}

// TestCheckRange checks each bound of CheckRange.
func TestCheckRange(t *testing.T) {
	for _, c := range []struct {
		off, n     uint64
		size, data int64
		limit      uint64
		ok         bool
	}{
		{0, 100, 100, 100, 100, true},
		{1, 100, 100, 100, 100, false},        // past the end
		{^uint64(0), 2, 100, 100, 100, false}, // wraps
		{0, 100, 1 << 40, 50, 1 << 30, false}, // more than its data
		{0, 100, 1 << 40, 1 << 40, 99, false}, // over the cap
		{0, 100, -1, -1, 100, true},           // size and data unknown
	} {
		err := objfile.CheckRange("x", c.off, c.n, c.size, c.data, c.limit)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, objfile.ErrBadSize)) {
			t.Errorf("CheckRange(%#x, %d, %d, %d, %d) = %v", c.off, c.n, c.size, c.data, c.limit, err)
		}
	}
}
