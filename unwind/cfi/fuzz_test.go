package cfi

import (
	"debug/elf"
	"testing"
)

// FuzzBuild builds tables from hostile call-frame sections, as .eh_frame
// and as .debug_frame, for both architectures: the build must not panic,
// hang or allocate without bound, and the table must be sorted and answer
// lookups anywhere.
func FuzzBuild(f *testing.F) {
	for _, fx := range fixtures {
		ef, err := elf.Open("testdata/" + fx.file)
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range []string{".eh_frame", ".debug_frame"} {
			if s := ef.Section(name); s != nil {
				data, err := s.Data()
				if err != nil {
					f.Fatal(err)
				}
				f.Add(data, s.Addr, name == ".eh_frame", fx.arch == ArchARM64)
			}
		}
		ef.Close()
	}
	f.Add(ehFrame(0x1000, 0x2000, 32, amd64CIEInit, []byte{cfaAdvanceLoc | 1, cfaRememberState, cfaDefCFAOffset, 8, cfaAdvanceLoc | 1, cfaRestoreState}), uint64(0x1000), true, false)
	f.Fuzz(func(t *testing.T, data []byte, addr uint64, eh, arm bool) {
		arch := ArchAMD64
		if arm {
			arch = ArchARM64
		}
		segs := []Segment{{Vaddr: 0, Size: 1 << 26, Off: 0x1000}}
		tab := Build(arch, []Section{{Data: data, Addr: addr, EH: eh}}, segs)
		if tab.Rows() > len(data)+2 {
			t.Fatalf("%d rows from %d bytes", tab.Rows(), len(data))
		}
		rows := tab.AllRows()
		for i := 1; i < len(rows); i++ {
			if rows[i].Off <= rows[i-1].Off {
				t.Fatalf("rows %d and %d out of order: %#x, %#x", i-1, i, rows[i-1].Off, rows[i].Off)
			}
		}
		for _, r := range rows {
			got, ok := tab.Lookup(r.Off)
			if ok != (r.Rule.CFA != CFANone) || (ok && got != r.Rule) {
				t.Fatalf("lookup at row %#x: %v %v, row says %v", r.Off, got, ok, r.Rule)
			}
		}
		for _, off := range []uint64{0, 0x1000, 0x2000, 1 << 25, ^uint64(0)} {
			tab.Lookup(off)
		}
	})
}
