package symcache

import (
	"bytes"
	"debug/elf"
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
		for i := 0; i < tab.Len() && i < 1000; i++ {
			_, start := tab.Symbol(i)
			tab.Lookup(start)
			tab.Lookup(start + 1)
		}
	})
}
