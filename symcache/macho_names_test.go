package symcache

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile/objfiletest"
)

// TestMachOSymbolsLongNames reads a Mach-O symbol table of 20,000
// functions whose names all point into one 4 MiB unterminated run of the
// string table: the old reader scanned and copied the run once per symbol
// (80 GB); now the run is scanned once and the table, whose names would
// far outweigh their string table, is left out.
func TestMachOSymbolsLongNames(t *testing.T) {
	const n = 20000
	strs := bytes.Repeat([]byte{'_'}, 4<<20)
	syms := make([]byte, 16*n)
	for i := 0; i < n; i++ {
		e := syms[16*i:]
		binary.LittleEndian.PutUint32(e, uint32(8*i))
		e[4] = images.NSect
		e[5] = 1
		binary.LittleEndian.PutUint64(e[8:], uint64(0x1000+16*i))
	}
	data := append(syms, strs...)
	m := &images.MachO{
		Symtab:   &images.MachOSymtab{SymOff: 0, NSyms: n, StrOff: uint32(len(syms)), StrSize: uint32(len(strs))},
		Sections: []images.MachOSection{{Name: "__text", Segment: "__TEXT", Addr: 0x1000, Size: 16 * n, Flags: 0x80000400}},
	}
	st, err := m.ReadSymbolTable(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var got []Symbol
	alloc := objfiletest.Allocated(func() { got = machOSymbols(m, st, nil, false) })
	if len(got) != 0 {
		t.Errorf("%d symbols kept, want the table left out", len(got))
	}
	if got = machOSymbols(m, st, nil, true); len(got) != 0 {
		t.Errorf("in place: %d symbols kept, want the table left out", len(got))
	}
	if alloc > 8<<20 {
		t.Errorf("allocated %d bytes", alloc)
	}
	t.Logf("%v, %d bytes allocated", time.Since(start), alloc)
}

// TestMachOSymbolsExactSize: machOSymbols returns the function symbols of
// a Mach-O fixture, the same in place as copied, in a slice of exactly their number, with room for the
// two bounds per section machOTable adds (it was sized for every symbol
// table entry: for swiftlint, 532,170 where 82,441 are functions; here
// 558 entries, 184 functions).
func TestMachOSymbolsExactSize(t *testing.T) {
	for _, name := range []string{"prog_arm64", "prog_x86_64", "cxx_arm64", "objc_arm64", "libdemo_arm64.dylib"} {
		f, err := images.OpenMachO(fixture(name), "")
		if err != nil {
			t.Fatal(err)
		}
		m := f.MachO
		st, err := m.ReadSymbolTable(f.R, f.Size)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		copied := machOSymbols(m, st, nil, false)
		for _, inPlace := range []bool{false, true} {
			got := machOSymbols(m, st, nil, inPlace)
			// In place, the second pass walks a bitmap of the
			// function entries: the same symbols, in the same
			// order, as the copying read.
			if !slices.Equal(got, copied) {
				t.Fatalf("%s: in place %v, %d symbols differ from the %d copied", name, inPlace, len(got), len(copied))
			}
			if len(got) == 0 || len(got) >= st.Len() {
				t.Fatalf("%s: %d function symbols of %d entries", name, len(got), st.Len())
			}
			// Grow rounds a small slice up to its size class.
			if want := len(got) + 2*len(m.Sections); cap(got) < want || cap(got) > want+want/8+8 {
				t.Errorf("%s (in place %v): %d symbols in a slice of %d, want %d", name, inPlace, len(got), cap(got), want)
			}
		}
	}
}
