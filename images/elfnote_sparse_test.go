package images

import (
	"errors"
	"testing"

	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/objfile/objfiletest"
	"github.com/macprof/macprof/internal/testprog"
)

// TestSparseELFBuildID reads the build ID of a sparse ELF whose sections
// claim gigabytes of holes: refused at the headers, with little allocated.
func TestSparseELFBuildID(t *testing.T) {
	sparse := objfiletest.SparseELF(t, testprog.BuildC(t, "spinexit.c"))
	var err error
	n := objfiletest.Allocated(func() { _, err = ELFBuildID(sparse) })
	if !errors.Is(err, objfile.ErrBadSize) {
		t.Fatalf("ELFBuildID: %v, want ErrBadSize", err)
	}
	if n > 8<<20 {
		t.Errorf("ELFBuildID allocated %d bytes", n)
	}
}
