package compact

import (
	"encoding/binary"
	"testing"

	"github.com/macprof/macprof/unwind"
)

// FuzzUnwindInfo parses hostile __unwind_info, looks up an offset and
// walks hostile registers over a hostile stack by the table (its bytes
// the image's __eh_frame too): nothing may
// panic, tables stay bounded by the input, rules cover the offset looked
// up, and the walk ends within its output.
func FuzzUnwindInfo(f *testing.F) {
	f.Add(buildSection([]uint32{0x04000000}, []uint32{0x10}, []synthPage{
		{regular: true, entries: []Entry{{0x1000, 0x04000000}, {0x1010, 0x02001000}}},
		{entries: []Entry{{0x2000, 0x03000010}, {0x2004, 0x01020021}}, local: []uint32{0x03000010, 0x01020021}},
	}, 0x3000, []LSDAEntry{{0x1010, 0x20}}), true, uint32(0x1004), []byte("\x10\x00\x00\x00\x00\x00\x00\x00\x20\x00\x00\x00\x00\x00\x00\x00"), uint64(0x7000), uint64(0x7000), uint64(0x1234))
	f.Fuzz(func(t *testing.T, data []byte, x86 bool, off uint32, stack []byte, sp, fp, lr uint64) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		if len(s.Entries) > len(data)/4 {
			t.Fatalf("%d entries from %d bytes", len(s.Entries), len(data))
		}
		arch := unwind.ArchARM64
		if x86 {
			arch = unwind.ArchAMD64
		}
		text := func(o uint32) (uint32, bool) {
			if uint64(o)+4 > uint64(len(data)) {
				return 0, false
			}
			return binary.LittleEndian.Uint32(data[o:]), true
		}
		tab, err := NewTable(s, arch, text)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := tab.Lookup(off)
		if ok && (off < r.Start || off >= r.End) {
			t.Fatalf("Lookup(%#x) gave range [%#x, %#x)", off, r.Start, r.End)
		}
		st := &unwind.Stack{Base: sp &^ 7, Data: stack, Lo: sp &^ 7, Hi: sp&^7 + uint64(len(stack))}
		if st.Hi < st.Lo {
			return
		}
		// The stack's bytes as the image's __eh_frame too: DWARF-mode
		// entries compile hostile FDEs.
		tab.withEHFrame(stack, 0, 0, uint64(s.End))
		// A whole walk over the hostile stack, the image at 0.
		imgs, err := NewImages(arch, []Image{{Start: 0, End: uint64(s.End), Table: tab}})
		if err != nil {
			return
		}
		if r, _ := imgs.Rule(uint64(off)); r != nil && r.CFA == unwind.CFANone {
			t.Fatalf("Rule(%#x) gave a rule without CFA", off)
		}
		w, err := unwind.NewWalker(unwind.Config{Arch: arch})
		if err != nil {
			t.Fatal(err)
		}
		pcs, _ := w.WalkCFI(unwind.Regs{PC: uint64(off), SP: sp, FP: fp, LR: lr}, st, imgs, make([]uint64, 0, 4096))
		if len(pcs) > 4096 {
			t.Fatalf("walk returned %d frames into 4096 slots", len(pcs))
		}
	})
}
