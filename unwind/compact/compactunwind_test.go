package compact

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/macprof/macprof/unwind"
)

// TestDecodeFixtureRules checks the rule of every fixture function against
// what its disassembly shows (testdata/build.sh; llvm-objdump -d).
func TestDecodeFixtureRules(t *testing.T) {
	want := map[string]map[string]Decoded{
		"arm64": {
			"caller":       {Kind: KindFrame},
			"saver":        {Kind: KindFrame, Pairs: PairX19X20 | PairX21X22 | PairX23X24 | PairX25X26},
			"main":         {Kind: KindFrame, Pairs: PairX19X20},
			"nofp_caller":  {Kind: KindDWARF}, // lld-14 writes FDE offset 0
			"sink":         {Kind: KindFrameless},
			"cleanup_user": {Kind: KindFrame, Pairs: PairX19X20, Personality: 1, HasLSDA: true},
			"leaf_asm":     {Kind: KindFrameless},
		},
		"x86_64": {
			"caller":       {Kind: KindFrame, NRegs: 5},
			"saver":        {Kind: KindFrame, NRegs: 5, RegsOffset: 40, Regs: [6]Reg{RegRBX, RegR12, RegR13, RegR14, RegR15}},
			"main":         {Kind: KindFrame, NRegs: 5, RegsOffset: 16, Regs: [6]Reg{RegRBX, RegR14}},
			"nofp_caller":  {Kind: KindFrameless, StackSize: 32, NRegs: 2, Regs: [6]Reg{RegRBX, RegR14}},
			"nofp_big":     {Kind: KindFrameless, StackSize: 3000 + 3*8, StackIndirect: true, SubOffset: 6, NRegs: 2, Regs: [6]Reg{RegRBX, RegR14}},
			"sink":         {Kind: KindNone},
			"cleanup_user": {Kind: KindFrame, NRegs: 5, RegsOffset: 16, Regs: [6]Reg{RegRBX, RegR14}, Personality: 1, HasLSDA: true},
			"leaf_asm":     {Kind: KindFrameless, StackSize: 8},
		},
	}
	for _, arch := range fixtureArchs {
		t.Run(arch, func(t *testing.T) {
			f, tab, sec := parseFixture(t, arch)
			im := loadImage(t, f)
			for name, w := range want[arch] {
				off := uint32(im.sym(t, name) - im.base)
				r, ok := tab.Lookup(off + 1)
				if !ok {
					t.Errorf("%s: no rule", name)
					continue
				}
				w.Start, w.End, w.Encoding = r.Start, r.End, r.Encoding
				if r != w {
					t.Errorf("%s: rule\n %+v, want\n %+v", name, r, w)
				}
				if r.Start > off || off >= r.End {
					t.Errorf("%s at %#x: rule covers [%#x, %#x)", name, off, r.Start, r.End)
				}
				if _, has := sec.LSDAFor(r.Start); has != w.HasLSDA {
					t.Errorf("%s: LSDA entry %v, encoding says %v", name, has, w.HasLSDA)
				}
			}
		})
	}
}

// encodePermutation is ld64's inverse of the permutation decoding: digit i
// counts the registers not yet used that are numbered below regs[i].
func encodePermutation(regs []Reg) uint32 {
	n := len(regs)
	var used [7]bool
	p := uint32(0)
	for i, r := range regs {
		d := uint32(0)
		for u := Reg(1); u < r; u++ {
			if !used[u] {
				d++
			}
		}
		used[r] = true
		w := uint32(1)
		for j := i + 1; j < n; j++ {
			w *= uint32(6 - j)
		}
		p += d * w
	}
	return p
}

// TestPermutationRoundTrip decodes every ordered choice of saved registers
// of a frameless x86_64 encoding.
func TestPermutationRoundTrip(t *testing.T) {
	count := 0
	var rec func(regs []Reg)
	rec = func(regs []Reg) {
		n := uint32(len(regs))
		enc := x86ModeStackImmd | 8<<16 | n<<10 | encodePermutation(regs)
		r := Decode(unwind.ArchAMD64, 0, 16, enc, nil)
		if r.Kind != KindFrameless || int(r.NRegs) != len(regs) || [6]Reg(append(append([]Reg{}, regs...), make([]Reg, 6-len(regs))...)) != r.Regs {
			t.Fatalf("registers %v: encoding %#x decoded as %+v", regs, enc, r)
		}
		wantSlot := uint8(0)
		for i, reg := range regs {
			if reg == RegRBP {
				wantSlot = uint8(i + 1)
			}
		}
		if r.rbpSlot != wantSlot {
			t.Fatalf("registers %v: RBP slot %d, want %d", regs, r.rbpSlot, wantSlot)
		}
		count++
		if len(regs) == 6 {
			return
		}
	next:
		for reg := RegRBX; reg <= RegRBP; reg++ {
			for _, u := range regs {
				if u == reg {
					continue next
				}
			}
			rec(append(append([]Reg{}, regs...), reg))
		}
	}
	rec(nil)
	// 1 + 6 + 30 + 120 + 360 + 720 + 720 ordered choices.
	if count != 1957 {
		t.Errorf("checked %d choices, want 1957", count)
	}
	// A digit too large for its position is refused.
	if r := Decode(unwind.ArchAMD64, 0, 16, x86ModeStackImmd|8<<16|1<<10|6, nil); r.Kind != KindInvalid {
		t.Errorf("permutation digit 6 of 1 register decoded as %+v", r)
	}
}

func TestDecodeInvalid(t *testing.T) {
	for _, tc := range []struct {
		arch unwind.Arch
		enc  uint32
	}{
		{unwind.ArchAMD64, x86ModeRBPFrame | 6},              // RBP in an RBP frame's slots
		{unwind.ArchAMD64, x86ModeRBPFrame | 7<<3},           // register 7
		{unwind.ArchAMD64, x86ModeStackImmd | 0<<16},         // no room for the return address
		{unwind.ArchAMD64, x86ModeStackImmd | 2<<16 | 2<<10}, // two registers and a return address in 16 bytes
		{unwind.ArchAMD64, x86ModeStackImmd | 8<<16 | 7<<10}, // seven registers
		{unwind.ArchAMD64, x86ModeStackInd | 4<<16},          // indirect without code to read
		{unwind.ArchAMD64, 0x05000000},                       // unknown mode
		{unwind.ArchARM64, 0x01000000},                       // unknown mode
	} {
		if r := Decode(tc.arch, 0, 16, tc.enc, nil); r.Kind != KindInvalid {
			t.Errorf("%v %#x decoded as %v", tc.arch, tc.enc, r.Kind)
		}
	}
	// An indirect size whose sub immediate is readable is resolved.
	r := Decode(unwind.ArchAMD64, 0x100, 0x200, x86ModeStackInd|4<<16|1<<13, func(off uint32) (uint32, bool) {
		return 0x1000, off == 0x104
	})
	if r.Kind != KindFrameless || r.StackSize != 0x1008 {
		t.Errorf("indirect rule %+v, want frameless of 0x1008 bytes", r)
	}
}

// TestSyntheticSection parses regular and compressed pages with page-local
// encodings, which the linked fixtures do not have.
func TestSyntheticSection(t *testing.T) {
	common := []uint32{0x04000000, 0x02001000}
	pages := []synthPage{
		{regular: true, entries: []Entry{{0x1000, 0x04000000}, {0x1040, 0x03000123}, {0x1100, 0}}},
		{entries: []Entry{{0x2000, 0x02001000}, {0x2010, 0x04000011}, {0x2400, 0x04000000}}, local: []uint32{0x04000011}},
	}
	data := buildSection(common, []uint32{0x4000}, pages, 0x3000, []LSDAEntry{{0x2010, 0x5000}})
	s, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var want []Entry
	for _, p := range pages {
		want = append(want, p.entries...)
	}
	if !eqSlices(s.Entries, want) || s.End != 0x3000 || !eqSlices(s.CommonEncodings, common) {
		t.Fatalf("parsed %+v", s)
	}
	if s.Index[0].Kind != secondRegular || s.Index[1].Kind != secondCompressed {
		t.Errorf("page kinds %d %d", s.Index[0].Kind, s.Index[1].Kind)
	}
	if l, ok := s.LSDAFor(0x2010); !ok || l != 0x5000 {
		t.Errorf("LSDA of 0x2010: %#x %v", l, ok)
	}
	if _, ok := s.LSDAFor(0x2000); ok {
		t.Error("LSDA found for a function without one")
	}
	tab, err := NewTable(s, unwind.ArchARM64, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		off  uint32
		ok   bool
		kind Kind
		dw   uint32
	}{
		{0xfff, false, 0, 0},
		{0x1000, true, KindFrame, 0},
		{0x1041, true, KindDWARF, 0x123},
		{0x10ff, true, KindDWARF, 0x123},
		{0x1100, true, KindNone, 0},
		{0x2008, true, KindFrameless, 0},
		{0x23ff, true, KindFrame, 0},
		{0x2fff, true, KindFrame, 0},
		{0x3000, false, 0, 0},
	} {
		r, ok := tab.Lookup(tc.off)
		if ok != tc.ok || r.Kind != tc.kind || r.DWARFOffset != tc.dw {
			t.Errorf("Lookup(%#x) = %+v %v, want kind %v dwarf %#x ok %v", tc.off, r, ok, tc.kind, tc.dw, tc.ok)
		}
	}
	if r, _ := tab.Lookup(0x2010); r.Pairs != PairX19X20|PairX27X28 || r.End != 0x2400 {
		t.Errorf("page-local encoding decoded as %+v", r)
	}
}

// TestHostileSections checks that malformed sections are refused with a
// FormatError, never a panic.
func TestHostileSections(t *testing.T) {
	good := buildSection([]uint32{0x04000000}, nil, []synthPage{
		{entries: []Entry{{0x1000, 0x04000000}, {0x1010, 0x02000000}}, local: []uint32{0x02000000}},
	}, 0x2000, nil)
	if _, err := Parse(good); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	mut := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	pageOff := le.Uint32(good[20:]) + 4 // the first index entry's page offset field
	cases := map[string][]byte{
		"empty":                nil,
		"short header":         good[:27],
		"version 2":            mut(func(b []byte) { le.PutUint32(b, 2) }),
		"common count huge":    mut(func(b []byte) { le.PutUint32(b[8:], 0xFFFFFFFF) }),
		"personality offset":   mut(func(b []byte) { le.PutUint32(b[12:], 0xFFFFFFF0); le.PutUint32(b[16:], 1) }),
		"index count huge":     mut(func(b []byte) { le.PutUint32(b[24:], 0x40000000) }),
		"page outside":         mut(func(b []byte) { le.PutUint32(b[pageOff:], uint32(len(b))) }),
		"page kind 7":          mut(func(b []byte) { le.PutUint32(b[le.Uint32(b[pageOff:]):], 7) }),
		"page entries past":    mut(func(b []byte) { le.PutUint16(b[le.Uint32(b[pageOff:])+6:], 0xFFFF) }),
		"encoding index":       mut(func(b []byte) { p := le.Uint32(b[pageOff:]); b[p+compressedHdrSize+3] = 9 }),
		"entry past range":     mut(func(b []byte) { p := le.Uint32(b[pageOff:]); b[p+compressedHdrSize+6] = 0x10 }),
		"index not sorted":     mut(func(b []byte) { le.PutUint32(b[pageOff+8:], 0x10) }),
		"truncated":            good[:len(good)-2],
		"LSDA range backwards": mut(func(b []byte) { le.PutUint32(b[pageOff+4:], 0xFFFF) }),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := Parse(data)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse = %+v, %v; want a FormatError", s, err)
			}
		})
	}
	// Many index entries sharing one page could multiply its entries
	// without bound; the entry budget refuses that.
	shared := buildSection(nil, nil, []synthPage{
		{regular: true, entries: make([]Entry, 1000)},
	}, 1, nil)
	var idx []byte
	for i := 0; i < 64; i++ {
		idx = le.AppendUint32(idx, 0)
		idx = le.AppendUint32(idx, le.Uint32(shared[le.Uint32(shared[20:])+4:]))
		idx = le.AppendUint32(idx, le.Uint32(shared[le.Uint32(shared[20:])+8:]))
	}
	sharedMany := append(append([]byte(nil), shared...), idx...)
	le.PutUint32(sharedMany[20:], uint32(len(shared)))
	le.PutUint32(sharedMany[24:], 64)
	if _, err := Parse(sharedMany); err == nil {
		t.Error("64 index entries sharing a 1000-entry page were accepted")
	}
}

// stackOf returns a stack copy of words starting at base.
func stackOf(base uint64, words ...uint64) *unwind.Stack {
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return &unwind.Stack{Base: base, Data: b, Lo: base, Hi: base + uint64(len(b))}
}

// TestWalkRules checks the unwind rule each kind of compact rule becomes
// (CompactUnwinder.hpp's steps), and a walk by one that restores RBP from
// its frameless slot.
func TestWalkRules(t *testing.T) {
	S, same, saved := unwind.CFASP, unwind.RegSame, unwind.RegSaved
	rbpSaver := Decode(unwind.ArchAMD64, 0, 16, x86ModeStackImmd|4<<16|2<<10|encodePermutation([]Reg{RegRBX, RegRBP}), nil)
	for _, tc := range []struct {
		name string
		arch unwind.Arch
		r    Decoded
		want unwind.Rule
	}{
		{"frame", unwind.ArchARM64, Decoded{Kind: KindFrame}, frameRule},
		{"frame x86", unwind.ArchAMD64, Decoded{Kind: KindFrame, NRegs: 5}, frameRule},
		{"arm64 frameless", unwind.ArchARM64, Decoded{Kind: KindFrameless, StackSize: 32}, unwind.Rule{CFA: S, CFAOff: 32, RA: same}},
		{"x86 frameless", unwind.ArchAMD64, Decoded{Kind: KindFrameless, StackSize: 8}, unwind.Rule{CFA: S, CFAOff: 8, RA: saved, RAOff: -8}},
		{"x86 frameless saving RBP", unwind.ArchAMD64, rbpSaver, unwind.Rule{CFA: S, CFAOff: 32, RA: saved, RAOff: -8, FP: saved, FPOff: -16}},
		{"dwarf", unwind.ArchAMD64, Decoded{Kind: KindDWARF, DWARFOffset: 0x40}, unwind.Rule{}},
		{"none", unwind.ArchARM64, Decoded{}, unwind.Rule{}},
		{"invalid", unwind.ArchARM64, Decoded{Kind: KindInvalid}, unwind.Rule{}},
	} {
		if got := toWalk(tc.arch, &tc.r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// The RBP saver, walked from SP = base+8: rbx at SP+8, RBP at SP+16,
	// the return address at SP+24; its caller keeps an RBP frame whose
	// record, at the RBP restored (base+64), ends the chain.
	const base, img = 0x7000_0000, 0x1_0000_0000
	sec, err := Parse(buildSection(nil, nil, []synthPage{{regular: true, entries: []Entry{{0x1000, rbpSaver.Encoding}, {0x1100, x86ModeRBPFrame}}}}, 0x2000, nil))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := NewTable(sec, unwind.ArchAMD64, nil)
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := NewImages(unwind.ArchAMD64, []Image{{Start: img, End: img + 0x2000, Base: img, Table: tab}})
	if err != nil {
		t.Fatal(err)
	}
	st := stackOf(base, 0, 0, 0xaa, base+64, img+0x1110, 0, 0, 0, 0, 0)
	pcs, res := mustWalker(t, unwind.ArchAMD64).WalkCFI(unwind.Regs{PC: img + 0x1008, SP: base + 8, FP: 1}, st, imgs, make([]uint64, 0, 8))
	if !eqSlices(pcs, []uint64{img + 0x1008, img + 0x1110}) || res.Stop != unwind.StopEnd || res.CFIFrames != 2 {
		t.Errorf("walk through the RBP saver: %#x %+v", pcs, res)
	}
}
