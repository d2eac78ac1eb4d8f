package symcache

import (
	"errors"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/objfile/objfiletest"
	"github.com/macprof/macprof/internal/testprog"
)

// TestSparseELFBounded loads the symbols of a 20 KB sparse ELF whose
// .eh_frame, .symtab and .strtab claim 1 GiB each above 3 GiB: the load
// fails at the headers, allocating a few KB (it allocated 4.7 GB).
func TestSparseELFBounded(t *testing.T) {
	sparse := objfiletest.SparseELF(t, testprog.BuildC(t, "spinexit.c"))
	img := &images.Image{Path: sparse, Format: images.FormatELF, Start: 0x400000, Limit: 0x500000}
	var err error
	n := objfiletest.Allocated(func() { _, err = LoadELF(img) })
	if !errors.Is(err, objfile.ErrBadSize) {
		t.Fatalf("LoadELF: %v, want ErrBadSize", err)
	}
	if n > 8<<20 {
		t.Errorf("LoadELF allocated %d bytes", n)
	}
	t.Logf("%v (%d bytes allocated)", err, n)
}
