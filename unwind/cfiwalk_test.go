package unwind

import (
	"encoding/binary"
	"slices"
	"testing"
)

// A synthetic object for WalkCFI: code mapped at objBase, offsets = pc -
// objBase, with these functions (amd64 rules unless said otherwise).
const (
	objBase   = 0x40_0000
	objSize   = 0x1_0000
	fnLeaf    = 0x1000 // CFA=SP+8 (arm64: CFA=SP+0, RA in LR)
	fnMid     = 0x2000 // CFA=SP+8, then SP+80 from +4
	fnFramed  = 0x3000 // push rbp; mov rbp,rsp: CFA=FP+16 from +4
	fnStart   = 0x4000 // the outermost frame: RA undefined
	fnExpr    = 0x5000 // CFA is an expression
	fnRecurse = 0x6000 // CFA=SP+32
	fnAligned = 0x6800 // CFA=[SP+16]+8: a realigned stack
	fnRedZone = 0x6c00 // CFA=[SP-8]+8, FP at CFA-24: OpenSSL's AVX2 SHA-256 loop
	fnEnd     = 0x7000
	jitBase   = 0x90_0000 // code no object covers
)

// testRows are the synthetic object's rows, in offsets from objBase: each
// applies up to the next, the last up to fnEnd.
func testRows(arch Arch) []tableRow {
	ra := Rule{RA: RegSaved, RAOff: -8}
	sp := func(off int32) Rule {
		r := ra
		r.CFA, r.CFAOff = CFASP, off
		return r
	}
	leaf := sp(8)
	if arch == ArchARM64 {
		leaf = Rule{CFA: CFASP, RA: RegSame}
	}
	framed := Rule{CFA: CFAFP, CFAOff: 16, FP: RegSaved, FPOff: -16, RA: RegSaved, RAOff: -8}
	pushed := sp(16)
	pushed.FP, pushed.FPOff = RegSaved, -16
	start := sp(8)
	start.RA = RegUndefined
	return []tableRow{
		{Off: fnLeaf, Rule: leaf},
		{Off: fnLeaf + 0x100}, // a gap
		{Off: fnMid, Rule: sp(8)},
		{Off: fnMid + 4, Rule: sp(80)},
		{Off: fnFramed, Rule: sp(8)},
		{Off: fnFramed + 1, Rule: pushed},
		{Off: fnFramed + 4, Rule: framed},
		{Off: fnStart, Rule: start},
		{Off: fnExpr, Rule: Rule{CFA: CFAUnsupported, RA: RegSaved, RAOff: -8}},
		{Off: fnRecurse, Rule: sp(32)},
		{Off: fnAligned, Rule: Rule{CFA: CFADerefSP, CFAOff: 16, CFAPlus: 8, RA: RegSaved, RAOff: -8}},
		{Off: fnRedZone, Rule: Rule{CFA: CFADerefSP, CFAOff: -8, CFAPlus: 8, RA: RegSaved, RAOff: -8, FP: RegSaved, FPOff: -24}},
	}
}

// tableRow is one row of a rowTable.
type tableRow struct {
	Off  uint64
	Rule Rule
}

// rowTable is the simplest table: sorted rows searched linearly, the
// last ending at fnEnd (unwind/cfi's tables are tested walked by the
// external tests, which may import it).
type rowTable []tableRow

func testTable(arch Arch) *rowTable {
	t := rowTable(testRows(arch))
	return &t
}

// find returns the rule at offset off, nil in a gap or past fnEnd.
func (t *rowTable) find(off uint64) *Rule {
	var r *Rule
	for i, row := range *t {
		if row.Off > off {
			break
		}
		r = &(*t)[i].Rule
	}
	if r == nil || off >= fnEnd || r.CFA == CFANone {
		return nil
	}
	return r
}

// oneObject is the Tables of a process with the synthetic object mapped.
type oneObject struct{ t *rowTable }

func (o oneObject) Rule(pc uint64) (*Rule, bool) {
	if pc >= objBase && pc < objBase+objSize {
		return o.t.find(pc - objBase), false
	}
	return nil, false
}

func (s *synth) word(addr, v uint64) {
	binary.LittleEndian.PutUint64(s.mem[addr-s.base:], v)
}

// frameless builds the amd64 stack of start -> framed -> mid -> leaf,
// where only framed keeps a frame record, and returns its registers and
// the expected PCs.
func frameless(s *synth) (Regs, []uint64) {
	sp := s.base + 0x100
	pc := uint64(objBase + fnLeaf + 0x10)
	ret1 := uint64(objBase + fnMid + 0x20)
	s.word(sp, ret1) // leaf: CFA=SP+8
	ret2 := uint64(objBase + fnFramed + 0x10)
	s.word(sp+8+72, ret2) // mid: CFA=SP+80 (its SP is leaf's CFA)
	f := sp + 8 + 80 + 32 // framed's record
	ret3 := uint64(objBase + fnStart + 0x10)
	s.put(f, 0x1234, ret3) // a junk saved FP: start's rules need none
	return Regs{PC: pc, SP: sp, FP: f}, []uint64{pc, ret1, ret2, ret3}
}

func TestWalkCFIFrameless(t *testing.T) {
	s := newSynth(testBase, 4096)
	regs, want := frameless(s)
	w := mustWalker(t, Config{Arch: ArchAMD64})
	got, res := w.WalkCFI(regs, s.stack(), oneObject{testTable(ArchAMD64)}, make([]uint64, 0, 64))
	if !slices.Equal(got, want) || res.Stop != StopEnd || res.CFIFrames != 3 {
		t.Errorf("got %#x, %v, %d CFI frames; want %#x, end of chain, 3", got, res.Stop, res.CFIFrames, want)
	}
	if res.Hash != HashPCs(got) {
		t.Errorf("hash %#x, HashPCs says %#x", res.Hash, HashPCs(got))
	}
	// The frame-pointer walk sees framed's record only.
	got, _ = w.Walk(regs, s.stack(), make([]uint64, 0, 64))
	if len(got) >= len(want) {
		t.Errorf("the frame-pointer walk found %#x: the test stack is not frameless", got)
	}
}

// TestWalkCFIThroughCodeWithoutTable: a frame in code no table covers (JIT)
// is unwound through its frame record, and the walk goes on with tables.
func TestWalkCFIThroughCodeWithoutTable(t *testing.T) {
	s := newSynth(testBase, 4096)
	regs, want := frameless(s)
	f := regs.FP
	jit := uint64(jitBase + 0x40)
	g := f + 64
	s.put(f, g, jit) // framed returns into JIT code
	ret := uint64(objBase + fnStart + 0x10)
	s.put(g, 0, ret)
	want = append(want[:3], jit, ret)
	w := mustWalker(t, Config{Arch: ArchAMD64})
	got, res := w.WalkCFI(regs, s.stack(), oneObject{testTable(ArchAMD64)}, make([]uint64, 0, 64))
	if !slices.Equal(got, want) || res.Stop != StopEnd {
		t.Errorf("got %#x, %v; want %#x, end of chain", got, res.Stop, want)
	}
}

// TestWalkCFIFromCodeWithoutTable: a sample in code no table covers (JIT
// code, which keeps frame pointers) is unwound through its frame record,
// and the walk takes the tables again where the return address lands in
// code that has them: here mid, which keeps no frame record, so that a
// frame-pointer walk from there loses start (amd64; on arm64 the walk is
// Walk's, for the caller a leaf leaves in LR).
func TestWalkCFIFromCodeWithoutTable(t *testing.T) {
	s := newSynth(testBase, 4096)
	sp := s.base + 0x100
	f := sp + 0x20                         // the JIT frame's record
	ret1 := uint64(objBase + fnMid + 0x20) // mid, past +4: CFA=SP+80
	s.put(f, 0, ret1)                      // the saved FP: mid's caller's, zero
	ret2 := uint64(objBase + fnStart + 0x10)
	s.word(f+16+80-8, ret2) // mid's return address, its SP being f+16
	regs := Regs{PC: jitBase + 0x40, SP: sp, FP: f}
	w := mustWalker(t, Config{Arch: ArchAMD64})
	tables := oneObject{testTable(ArchAMD64)}
	got, res := w.WalkCFI(regs, s.stack(), tables, make([]uint64, 0, 64))
	if want := []uint64{jitBase + 0x40, ret1, ret2}; !slices.Equal(got, want) || res.Stop != StopEnd || res.CFIFrames != 1 || !res.outermost || res.Hash != HashPCs(got) {
		t.Errorf("got %#x %+v; want %#x to the end, mid by the table, start its outermost frame", got, res, want)
	}
	if fp, _ := w.Walk(regs, s.stack(), make([]uint64, 0, 64)); len(fp) != 2 {
		t.Errorf("the frame-pointer walk gave %#x: the test does not show the tables taken again", fp)
	}
	if a := testing.AllocsPerRun(100, func() { w.WalkCFI(regs, s.stack(), tables, got) }); a != 0 {
		t.Errorf("%v allocations per walk", a)
	}
}

// TestWalkCFITablesOnly: with TablesOnly, code without a table ends the
// walk.
func TestWalkCFITablesOnly(t *testing.T) {
	s := newSynth(testBase, 4096)
	regs, want := frameless(s)
	f := regs.FP
	s.put(f, f+64, jitBase+0x40) // framed returns into JIT code
	w := mustWalker(t, Config{Arch: ArchAMD64, TablesOnly: true})
	tab := oneObject{testTable(ArchAMD64)}
	got, res := w.WalkCFI(regs, s.stack(), tab, make([]uint64, 0, 64))
	if want := append(want[:3:3], jitBase+0x40); !slices.Equal(got, want) || res.Stop != StopUnsupported {
		t.Errorf("got %#x, %v; want %#x, %v", got, res.Stop, want, StopUnsupported)
	}
	got, res = w.WalkCFI(Regs{PC: jitBase, SP: regs.SP, FP: f}, s.stack(), tab, make([]uint64, 0, 64))
	if len(got) != 1 || res.Stop != StopUnsupported || res.Hash != HashPCs(got) {
		t.Errorf("PC without table: got %#x, %+v; want the PC alone, %v", got, res, StopUnsupported)
	}
}

// TestWalkCFINoTableAtPC: when the interrupted code has no table the walk
// is the frame-pointer walk's.
func TestWalkCFINoTableAtPC(t *testing.T) {
	s := newSynth(testBase, 4096)
	want := s.chain(testBase+0x200, 5, 0x40, testRet)
	regs := Regs{PC: jitBase, SP: testBase + 0x100, FP: testBase + 0x200}
	w := mustWalker(t, Config{Arch: ArchAMD64})
	got, res := w.WalkCFI(regs, s.stack(), oneObject{testTable(ArchAMD64)}, make([]uint64, 0, 64))
	fp, fres := w.Walk(regs, s.stack(), make([]uint64, 0, 64))
	if !slices.Equal(got, fp) || res != fres || !slices.Equal(got[1:], want) {
		t.Errorf("got %#x %+v; Walk %#x %+v", got, res, fp, fres)
	}
}

// TestWalkCFIARM64Leaf: on arm64 a leaf's return address is in LR; its
// caller saved LR on the stack.
func TestWalkCFIARM64Leaf(t *testing.T) {
	s := newSynth(testBase, 4096)
	sp := uint64(testBase + 0x100)
	pc := uint64(objBase + fnLeaf + 8)
	lr := uint64(objBase + fnMid + 0x20)
	ret := uint64(objBase + fnStart + 4)
	s.word(sp+80-8, ret) // mid: CFA=SP+80, RA at CFA-8
	w := mustWalker(t, Config{Arch: ArchARM64})
	got, res := w.WalkCFI(Regs{PC: pc, SP: sp, LR: lr}, s.stack(), oneObject{testTable(ArchARM64)}, make([]uint64, 0, 64))
	want := []uint64{pc, lr, ret}
	if !slices.Equal(got, want) || res.Stop != StopEnd || res.CFIFrames != 2 {
		t.Errorf("got %#x, %v, %d; want %#x, end of chain, 2", got, res.Stop, res.CFIFrames, want)
	}
}

// TestWalkCFIHostile checks each guard: the walk ends, truncated, with the
// reason.
func TestWalkCFIHostile(t *testing.T) {
	tab := oneObject{testTable(ArchAMD64)}
	w := mustWalker(t, Config{Arch: ArchAMD64})
	for _, c := range []struct {
		name  string
		setup func(s *synth) (Regs, *Stack)
		stop  StopReason
		n     int
	}{
		{"return into a leaf (CFA not above SP)", func(s *synth) (Regs, *Stack) {
			// leaf's caller "is" the arm64-style leaf rule: not
			// reachable on amd64, so use a frame whose CFA would
			// fall below SP: framed with FP below SP.
			sp := s.base + 0x200
			s.word(sp, objBase+fnFramed+0x10)
			return Regs{PC: objBase + fnLeaf, SP: sp, FP: s.base + 0x10}, s.stack()
		}, StopNotIncreasing, 2},
		{"CFA outside the stack", func(s *synth) (Regs, *Stack) {
			sp := s.base + 0x200
			s.word(sp, objBase+fnFramed+0x10)
			return Regs{PC: objBase + fnLeaf, SP: sp, FP: s.base + 1<<20}, s.stack()
		}, StopOutOfStack, 2},
		{"past the copy", func(s *synth) (Regs, *Stack) {
			sp := s.base + 0x200
			st := s.stack()
			st.Data = st.Data[:0x200+4]
			return Regs{PC: objBase + fnLeaf, SP: sp}, st
		}, StopReadFailed, 1},
		{"expression in a caller", func(s *synth) (Regs, *Stack) {
			sp := s.base + 0x200
			s.word(sp, objBase+fnExpr+0x10)
			return Regs{PC: objBase + fnLeaf, SP: sp}, s.stack()
		}, StopUnsupported, 2},
		{"expression at the PC: a PLT stub", func(s *synth) (Regs, *Stack) {
			sp := s.base + 0x200
			s.word(sp, objBase+fnStart+0x10)
			return Regs{PC: objBase + fnExpr, SP: sp}, s.stack()
		}, StopEnd, 2},
		{"endless recursion", func(s *synth) (Regs, *Stack) {
			sp := s.base
			for a := sp; a+32 <= s.base+uint64(len(s.mem)); a += 32 {
				s.word(a+24, objBase+fnRecurse+0x10)
			}
			return Regs{PC: objBase + fnRecurse, SP: sp}, s.stack()
		}, StopOutOfStack, 4096/32 + 1},
		{"a realigned stack", func(s *synth) (Regs, *Stack) {
			sp := s.base + 0x200
			old := s.base + 0x400 // the SP before realigning, saved at SP+16
			s.word(sp+16, old)
			s.word(old, objBase+fnStart+0x10) // CFA = old+8, RA at CFA-8
			return Regs{PC: objBase + fnAligned, SP: sp}, s.stack()
		}, StopEnd, 2},
		{"a realigned stack pointing down", func(s *synth) (Regs, *Stack) {
			sp := s.base + 0x200
			s.word(sp+16, s.base+0x100)
			return Regs{PC: objBase + fnAligned, SP: sp}, s.stack()
		}, StopNotIncreasing, 1},
		{"a zero return address", func(s *synth) (Regs, *Stack) {
			return Regs{PC: objBase + fnLeaf, SP: s.base + 0x200}, s.stack()
		}, StopEnd, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSynth(testBase, 4096)
			regs, st := c.setup(s)
			got, res := w.WalkCFI(regs, st, tab, make([]uint64, 0, 1000))
			if res.Stop != c.stop || len(got) != c.n {
				t.Errorf("got %d frames %#x, %v; want %d, %v", len(got), got, res.Stop, c.n, c.stop)
			}
		})
	}
}

// TestWalkCFIBounds: the frame limit and the output's capacity hold.
func TestWalkCFIBounds(t *testing.T) {
	s := newSynth(testBase, 4096)
	for a := s.base; a+32 <= s.base+4096; a += 32 {
		s.word(a+24, objBase+fnRecurse+0x10)
	}
	regs := Regs{PC: objBase + fnRecurse, SP: s.base}
	w := mustWalker(t, Config{Arch: ArchAMD64, MaxFrames: 10})
	got, res := w.WalkCFI(regs, s.stack(), oneObject{testTable(ArchAMD64)}, make([]uint64, 0, 100))
	if len(got) != 10 || res.Stop != StopMaxFrames {
		t.Errorf("limit 10: %d frames, %v", len(got), res.Stop)
	}
	got, res = w.WalkCFI(regs, s.stack(), oneObject{testTable(ArchAMD64)}, make([]uint64, 0, 5))
	if len(got) != 5 || res.Stop != StopNoRoom {
		t.Errorf("capacity 5: %d frames, %v", len(got), res.Stop)
	}
}

// calls builds an amd64 stack of n frameless frames and returns its
// registers: all of fnRecurse (a recursion: each frame's rule is the row
// the walk looked up last) or, alternating, fnRecurse called from fnMid
// and fnMid from fnRecurse (each frame a table lookup).
func calls(n int, alternate bool) (*synth, Regs) {
	s := newSynth(testBase, 80*n+64)
	sp := s.base
	for i := 0; i < n; i++ {
		size := uint64(32) // fnRecurse's CFA=SP+32
		if alternate && i%2 == 1 {
			size = 80 // fnMid past +4: CFA=SP+80
		}
		ret := uint64(objBase + fnRecurse + 0x10)
		if alternate && i%2 == 0 {
			ret = objBase + fnMid + 0x10
		}
		if i == n-1 {
			ret = objBase + fnStart + 0x10
		}
		s.word(sp+size-8, ret)
		sp += size
	}
	return s, Regs{PC: objBase + fnRecurse + 4, SP: s.base}
}

func TestWalkCFINoAllocs(t *testing.T) {
	w := mustWalker(t, Config{Arch: ArchAMD64})
	var tables Tables = oneObject{testTable(ArchAMD64)}
	for _, alt := range []bool{false, true} {
		s, regs := calls(64, alt)
		dst := make([]uint64, 0, 128)
		st := s.stack()
		got, res := w.WalkCFI(regs, st, tables, dst)
		if len(got) != 65 || res.Stop != StopEnd || res.CFIFrames != 64 {
			t.Fatalf("alternating %v: %d frames (%d CFI), %v; want 65 (64), end of chain", alt, len(got), res.CFIFrames, res.Stop)
		}
		if a := testing.AllocsPerRun(100, func() { w.WalkCFI(regs, st, tables, dst) }); a != 0 {
			t.Errorf("%v allocations per walk", a)
		}
	}
}

// FuzzWalkCFI: arbitrary stack bytes and registers walked with the
// synthetic object's table never panic, loop, exceed the output or read
// outside the stack bounds (patternMem checks the fallback reads).
func FuzzWalkCFI(f *testing.F) {
	s := newSynth(testBase, 4096)
	regs, _ := frameless(s)
	f.Add(s.mem, regs.PC, regs.SP-testBase, regs.FP, uint64(0), false, uint16(64))
	a, ar := calls(40, true)
	f.Add(a.mem, ar.PC, uint64(0), uint64(0), uint64(0), false, uint16(100))
	f.Add(a.mem[:100], uint64(objBase+fnLeaf), uint64(8), uint64(0), uint64(objBase+fnMid+8), true, uint16(3))
	// spOff's top bit: a copy that starts at SP with no fallback reader,
	// as a kernel sample's (the red-zone scan).
	r := newSynth(testBase, 4096)
	rregs, rst, _ := redZone(r, true)
	f.Add(rst.Data, rregs.PC, rregs.SP-testBase|1<<63, rregs.FP, uint64(0), false, uint16(64))
	f.Fuzz(func(t *testing.T, data []byte, pc, spOff, fp, lr uint64, arm bool, capacity uint16) {
		arch := ArchAMD64
		if arm {
			arch = ArchARM64
		}
		hi := uint64(testBase + 8192)
		sp := testBase + spOff%8192
		cfg := Config{Arch: arch, Fallback: &patternMem{t: t, lo: testBase, hi: hi}}
		st := &Stack{Base: testBase, Data: data, Lo: testBase, Hi: hi}
		if spOff&(1<<63) != 0 {
			cfg.Fallback, st.Base = nil, sp
		}
		w := mustWalker(t, cfg)
		dst := make([]uint64, 0, int(capacity))
		regs := Regs{PC: pc, SP: sp, FP: fp, LR: lr}
		tables := oneObject{testTable(arch)}
		got, res := w.WalkCFI(regs, st, tables, dst)
		// The same walk with a rule cache (a cold one, then warm) gives
		// the same frames and Result.
		cached := cachedTables{tables, new(RuleCache)}
		for range 2 {
			again, res2 := w.WalkCFI(regs, st, cached, make([]uint64, 0, int(capacity)))
			if !slices.Equal(again, got) || res2 != res {
				t.Fatalf("with a rule cache: %#x, %+v; without: %#x, %+v", again, res2, got, res)
			}
		}
		if len(got) > int(capacity) || len(got) > DefaultMaxFrames {
			t.Fatalf("%d frames with capacity %d", len(got), capacity)
		}
		if res.Stop > StopBelowSP || res.Stop == StopNoFrameRecord {
			t.Fatalf("stop reason %v", res.Stop)
		}
		if res.Hash != 0 && res.Hash != HashPCs(got) {
			t.Fatalf("hash %#x, HashPCs %#x", res.Hash, HashPCs(got))
		}
	})
}

// cachedTables is t with a RuleCache (unwind.Cached): each answer Rule
// gives is remembered, as cfi.Resolver and compact.Images remember theirs.
type cachedTables struct {
	t     Tables
	cache *RuleCache
}

func (c cachedTables) Rule(pc uint64) (*Rule, bool) {
	if r, fp, ok := c.cache.Get(pc); ok {
		return r, fp
	}
	r, fp := c.t.Rule(pc)
	c.cache.Put(pc, r, fp)
	return r, fp
}

func (c cachedTables) RuleCache() *RuleCache { return c.cache }

// Walks through a rule cache (the fast loop, walkCached, where it applies)
// give what walks without one give, over the synthetic stacks of the other
// tests; FuzzWalkCFI compares them on arbitrary stacks.
func TestWalkCFIWithRuleCache(t *testing.T) {
	for _, arch := range []Arch{ArchAMD64, ArchARM64} {
		tables := oneObject{testTable(arch)}
		w := mustWalker(t, Config{Arch: arch})
		var cases []func() (Regs, *Stack)
		for _, alt := range []bool{false, true} {
			cases = append(cases, func() (Regs, *Stack) { s, regs := calls(60, alt); return regs, s.stack() })
			cases = append(cases, func() (Regs, *Stack) {
				// A copy that ends mid-stack: the walk ends where it needs more.
				s, regs := calls(60, alt)
				st := s.stack()
				st.Data = st.Data[:700]
				return regs, st
			})
		}
		cases = append(cases, func() (Regs, *Stack) { s := newSynth(testBase, 4096); regs, _ := frameless(s); return regs, s.stack() })
		cases = append(cases, func() (Regs, *Stack) { r := newSynth(testBase, 4096); regs, st, _ := redZone(r, true); return regs, st })
		for i, mk := range cases {
			regs, st := mk()
			want, wres := w.WalkCFI(regs, st, tables, make([]uint64, 0, 128))
			cached := cachedTables{tables, new(RuleCache)}
			for pass := range 2 {
				got, res := w.WalkCFI(regs, st, cached, make([]uint64, 0, 128))
				if !slices.Equal(got, want) || res != wres {
					t.Errorf("%v case %d pass %d: %#x, %+v; without the cache %#x, %+v", arch, i, pass, got, res, want, wres)
				}
			}
			if arch == ArchAMD64 && i == 0 && wres.CFIFrames < 60 {
				t.Errorf("case 0: %d frames by the tables", wres.CFIFrames)
			}
		}
	}
}

// redZone lays out a sample in fnRedZone, as OpenSSL's AVX2 SHA-256 loop
// leaves it: the caller's SP (the return address's slot) saved in the
// frame at SP+0x58 and copied to SP-8, below the stack pointer; a stale
// return address into fnLeaf at SP+0x20 with a zero after it. It returns
// the registers, a copy that starts at SP (as the kernel's does) and the
// expected PCs: fnRedZone -> mid -> start.
func redZone(s *synth, savedSP bool) (Regs, *Stack, []uint64) {
	sp := s.base + 0x200
	ra := s.base + 0x400 // the caller's SP: the return address's slot
	s.word(sp-8, ra)
	if savedSP {
		s.word(sp+0x58, ra)
	}
	s.word(sp+0x20, objBase+fnLeaf+0x10) // stale, a zero after it
	s.word(sp+0x10, sp+0x20)             // a stale pointer to it
	ret1 := uint64(objBase + fnMid + 0x20)
	s.word(ra, ret1)
	s.word(ra-16, 0x1234) // the caller's FP, at CFA-24
	ret2 := uint64(objBase + fnStart + 0x10)
	s.word(ra+8+72, ret2) // mid: CFA=SP+80
	st := s.stack()
	st.Base, st.Data = sp, s.mem[sp-s.base:]
	pc := uint64(objBase + fnRedZone + 0x40)
	return Regs{PC: pc, SP: sp, FP: 0x5555}, st, []uint64{pc, ret1, ret2}
}

// TestWalkCFIRedZone: a CFA kept below the stack pointer, outside a copy
// that starts there, is found by scanning the copy for the return address
// whose slot the frame also saved (the stale one a stale pointer points to
// is passed over); without that saved word the walk ends at the PC, marked
// StopBelowSP, and a copy that holds the red zone needs no scan.
func TestWalkCFIRedZone(t *testing.T) {
	tab := oneObject{testTable(ArchAMD64)}
	w := mustWalker(t, Config{Arch: ArchAMD64})

	regs, st, want := redZone(newSynth(testBase, 4096), true)
	got, res := w.WalkCFI(regs, st, tab, make([]uint64, 0, 64))
	if !slices.Equal(got, want) || res.Stop != StopEnd || res.ScannedFrames != 1 || res.CFIFrames != 2 {
		t.Errorf("scanned: %#x, %v, %d scanned and %d CFI frames; want %#x, end of chain, 1 and 2", got, res.Stop, res.ScannedFrames, res.CFIFrames, want)
	}
	if res.Hash != HashPCs(got) {
		t.Errorf("hash %#x, HashPCs says %#x", res.Hash, HashPCs(got))
	}

	regs, st, want = redZone(newSynth(testBase, 4096), false)
	got, res = w.WalkCFI(regs, st, tab, make([]uint64, 0, 64))
	if !slices.Equal(got, want[:1]) || res.Stop != StopBelowSP || res.ScannedFrames != 0 {
		t.Errorf("no saved SP: %#x, %v; want %#x, %v", got, res.Stop, want[:1], StopBelowSP)
	}

	s := newSynth(testBase, 4096)
	regs, _, want = redZone(s, false)
	got, res = w.WalkCFI(regs, s.stack(), tab, make([]uint64, 0, 64))
	if !slices.Equal(got, want) || res.Stop != StopEnd || res.ScannedFrames != 0 {
		t.Errorf("red zone in the copy: %#x, %v, %d scanned; want %#x, end of chain, none", got, res.Stop, res.ScannedFrames, want)
	}

	// Room for the PC only: the scan adds nothing.
	regs, st, _ = redZone(newSynth(testBase, 4096), true)
	if got, res := w.WalkCFI(regs, st, tab, make([]uint64, 0, 1)); len(got) != 1 || res.Stop != StopNoRoom {
		t.Errorf("capacity 1: %#x, %v", got, res.Stop)
	}
}

// TestWalkCFIRedZoneHostile: a copy every other word of which is a code
// address and the rest the addresses the red zone would hold makes every
// word a candidate; the scan still ends, within its bounds, and allocates
// nothing.
func TestWalkCFIRedZoneHostile(t *testing.T) {
	s := newSynth(testBase, 16384)
	sp := s.base + 0x100
	for a := sp; a+16 <= s.base+uint64(len(s.mem)); a += 16 {
		s.word(a, objBase+fnRecurse+0x10)
		s.word(a+8, a+16)
	}
	st := s.stack()
	st.Base, st.Data = sp, s.mem[sp-s.base:]
	regs := Regs{PC: objBase + fnRedZone + 0x40, SP: sp}
	w := mustWalker(t, Config{Arch: ArchAMD64})
	tab := oneObject{testTable(ArchAMD64)}
	dst := make([]uint64, 0, 64)
	var res Result
	allocs := testing.AllocsPerRun(20, func() { _, res = w.WalkCFI(regs, st, tab, dst) })
	if allocs != 0 {
		t.Errorf("%.1f allocations a walk", allocs)
	}
	if res.ScannedFrames > 1 {
		t.Errorf("%d scanned frames", res.ScannedFrames)
	}
	t.Logf("stop %v, %d CFI frames", res.Stop, res.CFIFrames)
}

// TestCopyReaderEdges: the walk's inlined loads read a word exactly when
// its 8 bytes lie inside both the copy and the stack's bounds, also for
// bounds at the ends of the address space, and read what the copy holds.
func TestCopyReaderEdges(t *testing.T) {
	data := make([]byte, 64)
	for i := range data {
		data[i] = byte(i + 1)
	}
	top := ^uint64(0)
	for _, st := range []Stack{
		{Base: 0x1000, Data: data, Lo: 0x1000, Hi: 0x1040},
		{Base: 0x1000, Data: data, Lo: 0x1010, Hi: 0x1030},
		{Base: 0x1000, Data: data, Lo: 0x0800, Hi: 0x2000},
		{Base: 0x1000, Data: data[:7], Lo: 0x1000, Hi: 0x2000},
		{Base: 0x1000, Data: data, Lo: 0x1000, Hi: 4},
		{Base: top - 31, Data: data, Lo: top - 31, Hi: top},
		{Base: top - 63, Data: data, Lo: 0, Hi: top},
		{Base: 0, Data: data, Lo: 0, Hi: 0x40},
	} {
		c := newCopyReader(&st)
		for _, base := range []uint64{st.Base, st.Lo, st.Hi} {
			for d := uint64(0); d < 80; d++ {
				for _, addr := range []uint64{base + d - 40, base - d} {
					off := addr - st.Base
					inside := addr >= st.Base && off < uint64(len(st.Data)) && uint64(len(st.Data))-off >= 8 &&
						addr >= st.Lo && st.Hi >= 8 && addr <= st.Hi-8
					v, ok := c.word(addr)
					if ok != inside {
						t.Fatalf("stack %#x+%d [%#x,%#x): word(%#x) ok=%v, want %v", st.Base, len(st.Data), st.Lo, st.Hi, addr, ok, inside)
					}
					if ok && v != binary.LittleEndian.Uint64(st.Data[off:]) {
						t.Fatalf("word(%#x) = %#x, want the copy's", addr, v)
					}
				}
			}
		}
	}
}
