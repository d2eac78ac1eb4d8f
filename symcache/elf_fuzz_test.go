package symcache

import (
	"bytes"
	"debug/elf"
	"slices"
	"testing"

	"github.com/macprof/macprof/internal/objfile"
)

// FuzzELFTable builds symbol tables from hostile ELF files, after the
// section checks every file opened for symbols passes: it must not panic,
// and what it allocates is bounded by the file (the seeds include a file
// whose .eh_frame, .symtab and .strtab claim 1 GiB each at 3 GiB), and
// every way of reading it gives the same table.
func FuzzELFTable(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := objfile.CheckELF(ef, int64(len(data)), int64(len(data))); err != nil {
			return
		}
		tab, err := ELFTable("fuzz", ef)
		if err != nil {
			return
		}
		var addrs []uint64
		for i := 0; i < tab.Len() && i < 1000; i++ {
			_, start := tab.Symbol(i)
			tab.Lookup(start)
			tab.Lookup(start + 1)
			if i%7 == 0 {
				addrs = append(addrs, start+1)
			}
		}
		// The few-address table (loadELFAt's) names them as tab does,
		// and the whole table with its names in the mapping
		// (LoadELFMapped's) is tab.
		if elfPclntabSection(ef) != nil {
			return
		}
		mappedTable(t, data, func(whole *Table) { sameTable(t, whole, tab) })
		slices.Sort(addrs)
		addrs = slices.Compact(addrs)
		sel, err := elfSymbolsAt("fuzz", ef, nil, addrs)
		if err != nil {
			t.Fatalf("elfSymbolsAt: %v, but ELFTable read the file", err)
		}
		sel.addEHStarts(ef)
		few := NewTable("fuzz", sel.symbols(false), nil, nil)
		// The same through a mapping of the bytes as a file (loadELFAt's
		// reads in place).
		mapped := mappedSymbolsAt(t, data, addrs)
		for _, a := range addrs {
			wn, ws, wok := tab.Lookup(a)
			gn, gs, gok := few.Lookup(a)
			if wn != gn || ws != gs || wok != gok {
				t.Errorf("%#x: %q at %#x (%v), want %q at %#x (%v)", a, gn, gs, gok, wn, ws, wok)
			}
			if gn, gs, gok = mapped.Lookup(a); wn != gn || ws != gs || wok != gok {
				t.Errorf("mapped: %#x: %q at %#x (%v), want %q at %#x (%v)", a, gn, gs, gok, wn, ws, wok)
			}
		}
	})
}

// mappedSymbolsAt writes data to a file and builds the few-address table
// of addrs from its mapping (objfile.MapELF), closed before it returns.
func mappedSymbolsAt(t *testing.T, data []byte, addrs []uint64) *Table {
	t.Helper()
	ef, m := mapTestELF(t, data)
	defer m.Close()
	sel, err := elfSymbolsAt("fuzz", ef, m, addrs)
	if err != nil {
		t.Fatalf("elfSymbolsAt mapped: %v, but ELFTable read the file", err)
	}
	sel.addEHStarts(ef)
	return NewTable("fuzz", sel.symbols(true), nil, nil)
}
