package images

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestEntryNameAsNameBytes checks that EntryName gives every entry of the
// fixtures' symbol tables the name NameBytes gives its Strx.
func TestEntryNameAsNameBytes(t *testing.T) {
	for _, name := range fixtureTables {
		st := fixtureTable(t, name)
		for i := st.Len() - 1; i >= 0; i-- { // the first call in the middle of use
			want, wok := st.NameBytes(st.Entry(i).Strx)
			got, ok := st.EntryName(i)
			if ok != wok || !bytes.Equal(got, want) {
				t.Fatalf("%s entry %d: %q %v, NameBytes %q %v", name, i, got, ok, want, wok)
			}
		}
		if st.Len() < 4 {
			t.Errorf("%s: only %d symbols", name, st.Len())
		}
	}
}

// TestEntryFieldsAsEntry checks that EntryFields gives every entry of the
// fixtures' symbol tables the fields Entry gives it.
func TestEntryFieldsAsEntry(t *testing.T) {
	for _, name := range fixtureTables {
		st := fixtureTable(t, name)
		for i := range st.Len() {
			var got Nlist64
			got.Strx, got.Type, got.Sect, got.Desc, got.Value = st.EntryFields(i)
			if want := st.Entry(i); got != want {
				t.Fatalf("%s entry %d: %+v, Entry %+v", name, i, got, want)
			}
		}
	}
}

// fixtureTables are the Mach-O fixtures whose symbol tables these tests read.
var fixtureTables = []string{"prog_arm64", "prog_x86_64", "cxx_arm64", "libdemo_arm64.dylib"}

// fixtureTable reads the symbol table of the fixture name.
func fixtureTable(t *testing.T, name string) *MachOSymbolTable {
	t.Helper()
	f, err := OpenMachO(filepath.Join("testdata", "macho", name), "")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.ReadSymbolTable(f.R, f.Size)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
