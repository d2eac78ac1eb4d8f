package images

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/objfile/objfiletest"
)

// TestSparseMachORefused opens a Mach-O whose LC_SYMTAB claims 1 GiB of
// symbols and 1 GiB of strings in holes above 3 GiB: refused at the load
// commands, with little allocated (each table was read whole before).
func TestSparseMachORefused(t *testing.T) {
	sparse := objfiletest.SparseMachO(t, filepath.Join("testdata", "macho", "prog_arm64"))
	var err error
	n := objfiletest.Allocated(func() {
		var f *MachOFile
		if f, err = OpenMachO(sparse, ""); err == nil {
			_, err = f.ReadSymbolTable(f.R, f.Size)
			f.Close()
		}
	})
	if !errors.Is(err, objfile.ErrBadSize) {
		t.Fatalf("OpenMachO: %v, want ErrBadSize", err)
	}
	if n > 8<<20 {
		t.Errorf("OpenMachO allocated %d bytes", n)
	}
	t.Logf("%v (%d bytes allocated)", err, n)
}
