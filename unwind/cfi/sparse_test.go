package cfi

import (
	"errors"
	"testing"

	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/objfile/objfiletest"
	"github.com/macprof/macprof/internal/testprog"
)

// TestSparseELFBounded loads the unwind table of a 20 KB sparse ELF whose
// .eh_frame claims 1 GiB above 3 GiB: the load fails at the headers,
// allocating a few KB.
func TestSparseELFBounded(t *testing.T) {
	sparse := objfiletest.SparseELF(t, testprog.BuildC(t, "spinexit.c"))
	var err error
	n := objfiletest.Allocated(func() { _, err = Load(sparse) })
	if !errors.Is(err, objfile.ErrBadSize) {
		t.Fatalf("Load: %v, want ErrBadSize", err)
	}
	if n > 8<<20 {
		t.Errorf("Load allocated %d bytes", n)
	}
	t.Logf("%v (%d bytes allocated)", err, n)
}
