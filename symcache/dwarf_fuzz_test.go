package symcache

import (
	"bytes"
	"debug/elf"
	"testing"
)

// FuzzDWARFLines feeds ELF files with DWARF to NewDWARFLines and looks up
// addresses: hostile line programs and trees must not panic, hang or grow
// without bound. The committed seed (testdata/fuzz/FuzzDWARFLines) is a
// gcc -O2 -g object file of inlineC, which has inlined functions.
func FuzzDWARFLines(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		d, err := ef.DWARF()
		if err != nil {
			return
		}
		l, err := NewDWARFLines(d)
		if err != nil {
			return
		}
		for _, a := range []uint64{addr, 0, 0x10, 0x40, 0x100} {
			if fr := l.Lines(a); len(fr) > maxDWARFDepth {
				t.Fatalf("%d frames", len(fr))
			}
		}
	})
}
