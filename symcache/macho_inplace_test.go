package symcache

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/macprof/macprof/images"
)

// TestMachOTableInPlaceAsCopied: a table whose symbol table, string table
// and function starts are read in place (a mapped file's) has the starts
// and names of one read through copies, on the Mach-O fixtures.
func TestMachOTableInPlaceAsCopied(t *testing.T) {
	for _, name := range []string{"prog_arm64", "prog_arm64_stripped", "libdemo_arm64.dylib", "cxx_arm64", "cxx_x86_64", "objc_arm64"} {
		data, err := os.ReadFile(filepath.Join("..", "images", "testdata", "macho", name))
		if err != nil {
			t.Fatal(err)
		}
		m, err := images.ReadMachO(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		want, err := MachOTable(name, m, bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := machOTable(name, m, machOInPlace(m, machOBytes(data)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Len() < 4 || !slices.Equal(got.starts, want.starts) || !slices.Equal(tableNames(got), tableNames(want)) {
			t.Errorf("%s: in place %#x %q\ncopied %#x %q", name, got.starts, tableNames(got), want.starts, tableNames(want))
		}
	}
}

// tableNames returns the names of t's functions, in order.
func tableNames(t *Table) []string {
	names := make([]string, t.Len())
	for i := range names {
		names[i], _ = t.Symbol(i)
	}
	return names
}
