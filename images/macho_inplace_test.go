package images

import (
	"bytes"
	"slices"
	"testing"
)

// TestReadInPlace: through an InPlaceReader, the symbol and string tables
// are views of its bytes, not copies, and hold what a copy does; the
// function starts are the same; a range past its end is an error.
func TestReadInPlace(t *testing.T) {
	for _, name := range []string{"prog_arm64", "libdemo_arm64.dylib", "cxx_x86_64"} {
		data := readFixture(t, name)
		m, err := ReadMachO(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		copied, err := m.ReadSymbolTable(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		lent, err := m.ReadSymbolTable(lender(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(lent.syms, copied.syms) || !bytes.Equal(lent.strs, copied.strs) {
			t.Fatalf("%s: tables read in place differ from copies", name)
		}
		if &lent.syms[0] != &data[m.Symtab.SymOff] || &lent.strs[0] != &data[m.Symtab.StrOff] {
			t.Errorf("%s: tables read through an InPlaceReader are copies", name)
		}
		want, err := m.ReadFunctionStarts(bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.ReadFunctionStarts(lender(data), int64(len(data)), nil)
		if err != nil || len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: function starts in place %#x, %v; copied %#x", name, got, err, want)
		}
		if _, err := m.ReadSymbolTable(lender(data[:m.Symtab.SymOff+8]), -1); err == nil {
			t.Errorf("%s: symbol table past the end of an InPlaceReader: no error", name)
		}
	}
}

// lender is an InPlaceReader lending data itself.
type lender []byte

func (b lender) ReadAt(p []byte, off int64) (int, error) { return bytes.NewReader(b).ReadAt(p, off) }

func (b lender) InPlace(off, n uint64) ([]byte, bool) {
	if off > uint64(len(b)) || n > uint64(len(b))-off {
		return nil, false
	}
	return b[off : off+n], true
}
