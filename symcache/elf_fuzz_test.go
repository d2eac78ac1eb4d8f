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
// whose .eh_frame, .symtab and .strtab claim 1 GiB each at 3 GiB).
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
		// The few-address table (loadELFAt's) names them as tab does.
		if elfPclntabSection(ef) != nil {
			return
		}
		slices.Sort(addrs)
		addrs = slices.Compact(addrs)
		sel, err := elfSymbolsAt("fuzz", ef, addrs)
		if err != nil {
			t.Fatalf("elfSymbolsAt: %v, but ELFTable read the file", err)
		}
		sel.addEHStarts(ef)
		few := NewTable("fuzz", sel.symbols(), nil, nil)
		for _, a := range addrs {
			wn, ws, wok := tab.Lookup(a)
			gn, gs, gok := few.Lookup(a)
			if wn != gn || ws != gs || wok != gok {
				t.Errorf("%#x: %q at %#x (%v), want %q at %#x (%v)", a, gn, gs, gok, wn, ws, wok)
			}
		}
	})
}
