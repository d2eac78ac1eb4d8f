package cfi

import (
	"debug/elf"
	"testing"

	"github.com/macprof/macprof/unwind"
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
				f.Add(data, s.Addr, name == ".eh_frame", fx.arch == unwind.ArchARM64)
			}
		}
		ef.Close()
	}
	f.Add(ehFrame(0x1000, 0x2000, 32, amd64CIEInit, []byte{cfaAdvanceLoc | 1, cfaRememberState, cfaDefCFAOffset, 8, cfaAdvanceLoc | 1, cfaRestoreState}), uint64(0x1000), true, false)
	f.Add(ehFrameAug("zRS", 0x1000, 0x2000, 16, amd64CIEInit, sigProg), uint64(0x1000), true, false)
	f.Fuzz(func(t *testing.T, data []byte, addr uint64, eh, arm bool) {
		arch := unwind.ArchAMD64
		if arm {
			arch = unwind.ArchARM64
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
			if ok != (r.Rule.CFA != unwind.CFANone) || (ok && got != r.Rule) {
				t.Fatalf("lookup at row %#x: %v %v, row says %v", r.Off, got, ok, r.Rule)
			}
		}
		for _, off := range []uint64{0, 0x1000, 0x2000, 1 << 25, ^uint64(0)} {
			tab.Lookup(off)
		}
	})
}

// FuzzLazyIndex indexes hostile .eh_frame bytes through a hostile
// .eh_frame_hdr: the index must be refused or answer lookups anywhere
// without panicking, compile rows in order inside their FDE, and hold no
// more rows than the section has bytes.
func FuzzLazyIndex(f *testing.F) {
	for _, fx := range fixtures[:2] {
		ef, err := elf.Open("testdata/" + fx.file)
		if err != nil {
			f.Fatal(err)
		}
		eh, ehAddr, _ := sectionData(ef, nil, ".eh_frame", maxSectionBytes)
		hdr, hdrAddr, _ := sectionData(ef, nil, ".eh_frame_hdr", maxSectionBytes)
		f.Add(eh, ehAddr, hdr, hdrAddr, fx.arch == unwind.ArchARM64)
		ef.Close()
	}
	f.Fuzz(func(t *testing.T, eh []byte, ehAddr uint64, hdr []byte, hdrAddr uint64, arm bool) {
		arch := unwind.ArchAMD64
		if arm {
			arch = unwind.ArchARM64
		}
		segs := []Segment{{Vaddr: 0x200000, Size: 1 << 20, Off: 0}}
		x := newIndex(arch, Section{Data: eh, Addr: ehAddr, EH: true}, hdr, hdrAddr, segs)
		if x == nil {
			return
		}
		tab := &Table{arch: arch, lazy: x}
		for i := range x.count {
			tab.Find(x.loc(i) - 0x200000)
			tab.Find(x.loc(i) - 0x200000 + 1)
		}
		for _, off := range []uint64{0, 0x1000, 1 << 19, 1<<20 - 1, 1 << 20, ^uint64(0)} {
			tab.Find(off)
		}
		for _, s := range x.spans() {
			for i, r := range s.rows {
				if r.Off < s.start || r.Off >= s.end || i > 0 && r.Off <= s.rows[i-1].Off {
					t.Fatalf("row %d at %#x out of order or outside [%#x,%#x)", i, r.Off, s.start, s.end)
				}
			}
		}
		if n := tab.Rows(); n > len(eh)+2 {
			t.Fatalf("%d rows from %d bytes", n, len(eh))
		}
	})
}
