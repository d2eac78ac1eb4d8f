package symcache

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/macprof/macprof/images"
)

// TestMachOTableInPlaceAsCopied: a table whose symbol table, string table
// and function starts are read in place (a mapped file's) has the starts
// and names of one read through copies, on the Mach-O fixtures; one of a
// file without __gopclntab keeps its names as offsets in the mapped
// string table (refs), none copied or measured when it is built.
func TestMachOTableInPlaceAsCopied(t *testing.T) {
	withRefs := 0
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
		if pcln, _ := machOPclntab(m); pcln == nil {
			if got.refs == nil || got.names != nil {
				t.Errorf("%s: in place, the names were copied out of the string table", name)
			}
			withRefs++
		}
	}
	if withRefs < 3 {
		t.Errorf("%d fixtures without __gopclntab, want at least 3", withRefs)
	}
}

// TestMachOTableInPlaceHostileNames: a Mach-O file read in place whose
// function symbols name offsets past its string table, or whose string
// table does not end in a NUL, is read as the copied one is where the
// name is none (an offset past the table: no name), and gives an empty
// name (or the raw bytes the copy keeps) where the last name runs to the
// table's end: no panic, no read past the table.
func TestMachOTableInPlaceHostileNames(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "images", "testdata", "macho", "cxx_arm64"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := images.ReadMachO(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.ReadSymbolTableStrings(bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	isFunc, _ := machOFunctionSet(m, st)
	var funcs []int
	for i := 0; i < st.Len(); i++ {
		if isFunc[i/64]&(1<<(i%64)) != 0 {
			funcs = append(funcs, i)
		}
	}
	if len(funcs) < 3 {
		t.Fatalf("%d function symbols", len(funcs))
	}
	sym := m.Symtab
	strx := func(i int) []byte { return data[int(sym.SymOff)+16*i:][:4] }
	le := binary.LittleEndian
	// The first function's name past the table, the second's at its
	// very end, the third's at its last byte, which is not a NUL.
	le.PutUint32(strx(funcs[0]), sym.StrSize+1000)
	le.PutUint32(strx(funcs[1]), sym.StrSize)
	le.PutUint32(strx(funcs[2]), sym.StrSize-3)
	strs := data[sym.StrOff : sym.StrOff+sym.StrSize]
	copy(strs[len(strs)-3:], "_ab")
	want, err := MachOTable("hostile", m, bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := machOTable("hostile", m, machOInPlace(m, machOBytes(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.refs == nil {
		t.Fatal("names copied out of the string table")
	}
	if !slices.Equal(got.starts, want.starts) {
		t.Fatalf("in place %#x, copied %#x", got.starts, want.starts)
	}
	value := func(i int) uint64 { _, _, _, _, v := st.EntryFields(i); return v }
	for k, i := range funcs[:3] {
		idx := got.LookupIndex(value(i))
		if idx < 0 || got.Start(idx) != value(i) {
			t.Fatalf("function %d at %#x not a start", k, value(i))
		}
		gotName, _ := got.Symbol(idx)
		wantName, _ := want.Symbol(idx)
		switch {
		case k < 2 && (gotName != "" || wantName != ""):
			t.Errorf("function %d (offset past the table): in place %q, copied %q, want none", k, gotName, wantName)
		case k == 2 && gotName != "" && gotName != wantName:
			t.Errorf("function %d (name with no NUL): in place %q, want none or %q", k, gotName, wantName)
		}
	}
	for i := range got.starts {
		gotName, _ := got.Symbol(i)
		wantName, _ := want.Symbol(i)
		if gotName != wantName && !(gotName == "" && wantName == "ab") {
			t.Errorf("function %d at %#x: in place %q, copied %q", i, got.starts[i], gotName, wantName)
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
