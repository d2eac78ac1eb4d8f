package unwind

import (
	"slices"
	"testing"
)

// spliceStack lays out a sample in a leaf without a frame record (fnLeaf),
// called from fnMid (no record, FP untouched), called from n frames of
// fnFramed that keep records, under fnStart, the outermost. It returns the
// registers, the whole copy, the kernel's callchain of it (the PC, then
// each record's return address from FP on, as perf_event takes it), the
// offset of the first record (a copy shorter than that ends before it) and
// the whole walk's addresses.
func spliceStack(n int) (Regs, *Stack, []uint64, int, []uint64) {
	s := newSynth(testBase, 4096)
	sp := s.base + 0x100
	s.word(sp, objBase+fnMid+0x10) // the leaf's return address
	cfa := sp + 8 + 80             // fnMid's CFA
	s.word(cfa-8, objBase+fnFramed+0x10)
	regs := Regs{PC: objBase + fnLeaf + 4, SP: sp}
	want := []uint64{regs.PC, objBase + fnMid + 0x10, objBase + fnFramed + 0x10}
	chain := []uint64{regs.PC}
	fp := cfa + 48 // fnFramed's locals, then its record
	regs.FP = fp
	first := int(fp - sp)
	for i := 0; i < n; i++ {
		next, ret := fp+16+32, uint64(objBase+fnFramed+0x10)
		if i == n-1 {
			next, ret = 0, objBase+fnStart+0x10
		}
		s.put(fp, next, ret)
		want = append(want, ret)
		chain = append(chain, ret)
		fp = next
	}
	st := s.stack()
	st.Data = st.Data[sp-s.base:]
	st.Base = sp
	return regs, st, chain, first, want
}

// TestWalkCFISplicesTheCallchain: a walk of a copy that ends before the
// first frame record takes the callers from the kernel's callchain, and
// gives what the walk of the whole copy gives; where the chain disagrees
// with the copy, or names a caller that keeps no record, the walk is cut
// where the copy ends, as without a chain.
func TestWalkCFISplicesTheCallchain(t *testing.T) {
	w := mustWalker(t, Config{Arch: ArchAMD64})
	tab := oneObject{testTable(ArchAMD64)}
	regs, whole, chain, first, want := spliceStack(6)
	got, wres := w.WalkCFI(regs, whole, tab, make([]uint64, 0, 64))
	if !slices.Equal(got, want) || wres.Stop != StopEnd || wres.ChainFrames != 0 {
		t.Fatalf("whole copy: %#x %v; want %#x", got, wres.Stop, want)
	}
	small := func(chain []uint64, cut bool) *Stack {
		st := *whole
		st.Data, st.Chain, st.ChainCut = whole.Data[:first], chain, cut
		return &st
	}
	st := small(chain, false)
	dst := make([]uint64, 0, 64)
	got, res := w.WalkCFI(regs, st, tab, dst)
	if !slices.Equal(got, want) || res.Stop != StopEnd || res.ChainFrames != 6 || res.Hash != wres.Hash || res.CFIFrames != wres.CFIFrames {
		t.Fatalf("small copy and callchain: %#x %+v; want %#x, 6 frames from the chain, as the whole copy's %+v", got, res, want, wres)
	}
	if a := testing.AllocsPerRun(100, func() { w.WalkCFI(regs, st, tab, dst) }); a != 0 {
		t.Errorf("%v allocations per walk", a)
	}
	// Without a chain the copy's end cuts the walk.
	got, res = w.WalkCFI(regs, small(nil, false), tab, dst)
	if !slices.Equal(got, want[:3]) || res.Stop != StopReadFailed {
		t.Fatalf("small copy alone: %#x %v; want %#x, %v", got, res.Stop, want[:3], StopReadFailed)
	}
	// A copy holding the first record, whose return address the chain
	// does not give: not the kernel's walk of this stack.
	forged := slices.Clone(chain)
	forged[1]++
	st2 := small(forged, false)
	st2.Data = whole.Data[:first+16]
	if got, res = w.WalkCFI(regs, st2, tab, dst); res.Stop != StopReadFailed || res.ChainFrames != 0 || len(got) != 4 {
		t.Errorf("chain unlike the copy: %#x %v; want 4 frames, %v", got, res.Stop, StopReadFailed)
	}
	// A caller without a record in the chain: the kernel read on from a
	// record not its own.
	odd := slices.Clone(chain)
	odd[3] = objBase + fnMid + 0x10
	if got, res = w.WalkCFI(regs, small(odd, false), tab, dst); res.Stop != StopReadFailed || len(got) != 3 {
		t.Errorf("chain through a frame without a record: %#x %v; want 3 frames, %v", got, res.Stop, StopReadFailed)
	}
	// A chain the kernel cut at its depth limit ends the stack so.
	if got, res = w.WalkCFI(regs, small(chain[:4], true), tab, dst); res.Stop != StopMaxFrames || !slices.Equal(got, want[:6]) {
		t.Errorf("cut chain: %#x %v; want %#x, %v", got, res.Stop, want[:6], StopMaxFrames)
	}
	// The output's capacity bounds the frames taken.
	if got, res = w.WalkCFI(regs, st, tab, make([]uint64, 0, 5)); res.Stop != StopNoRoom || !slices.Equal(got, want[:5]) || res.Hash != HashPCs(got) {
		t.Errorf("capacity 5: %#x %v; want %#x, %v", got, res.Stop, want[:5], StopNoRoom)
	}
}

// FuzzWalkCFISplice: arbitrary stack bytes, registers and callchains walked
// with the synthetic object's table never panic, exceed the output, or
// return a hash other than their addresses'.
func FuzzWalkCFISplice(f *testing.F) {
	regs, whole, chain, first, _ := spliceStack(6)
	enc := func(c []uint64) []byte {
		b := make([]byte, 8*len(c))
		for i, v := range c {
			b[8*i] = byte(v)
			for j := 1; j < 8; j++ {
				b[8*i+j] = byte(v >> (8 * j))
			}
		}
		return b
	}
	f.Add(whole.Data[:first], enc(chain), regs.PC, regs.FP-regs.SP, false, uint16(64))
	f.Add(whole.Data[:first+16], enc(chain[:3]), regs.PC, regs.FP-regs.SP, true, uint16(4))
	f.Fuzz(func(t *testing.T, data, chainBytes []byte, pc, fpOff uint64, cut bool, capacity uint16) {
		sp := uint64(testBase + 0x100)
		var chain []uint64
		for i := 0; i+8 <= len(chainBytes) && i < 8*256; i += 8 {
			var v uint64
			for j := 0; j < 8; j++ {
				v |= uint64(chainBytes[i+j]) << (8 * j)
			}
			chain = append(chain, v)
		}
		st := &Stack{Base: sp, Data: data, Lo: testBase, Hi: testBase + 8192, Chain: chain, ChainCut: cut}
		w := mustWalker(t, Config{Arch: ArchAMD64})
		got, res := w.WalkCFI(Regs{PC: pc, SP: sp, FP: sp + fpOff}, st, oneObject{testTable(ArchAMD64)}, make([]uint64, 0, int(capacity)))
		if len(got) > int(capacity) || res.ChainFrames > len(chain) {
			t.Fatalf("%d frames (%d from a chain of %d) with capacity %d", len(got), res.ChainFrames, len(chain), capacity)
		}
		if res.Hash != 0 && res.Hash != HashPCs(got) {
			t.Fatalf("hash %#x, HashPCs %#x", res.Hash, HashPCs(got))
		}
	})
}

// TestWalkCFISpliceRedZone: a red-zone scan (scanReturn) that finds no
// candidate within a small copy with a callchain ends the walk as where the
// copy ends (StopReadFailed), not StopBelowSP, and takes nothing from the
// chain: a whole copy might have held the candidate.
func TestWalkCFISpliceRedZone(t *testing.T) {
	tab := oneObject{testTable(ArchAMD64)}
	w := mustWalker(t, Config{Arch: ArchAMD64})
	regs, st, want := redZone(newSynth(testBase, 4096), true)
	chain := []uint64{regs.PC, 0x1234}
	st.Chain = chain
	got, res := w.WalkCFI(regs, st, tab, make([]uint64, 0, 64))
	if !slices.Equal(got, want) || res.Stop != StopEnd || res.ChainFrames != 0 {
		t.Errorf("whole copy with a chain: %#x %v; want %#x, end of chain", got, res.Stop, want)
	}
	small := *st
	small.Data = st.Data[:0x40] // the saved SP at SP+0x58 lies past it
	got, res = w.WalkCFI(regs, &small, tab, make([]uint64, 0, 64))
	if !slices.Equal(got, want[:1]) || res.Stop != StopReadFailed || res.ChainFrames != 0 {
		t.Errorf("small copy with a chain: %#x %v; want %#x, %v", got, res.Stop, want[:1], StopReadFailed)
	}
	small.Chain = nil
	if _, res = w.WalkCFI(regs, &small, tab, make([]uint64, 0, 64)); res.Stop != StopBelowSP {
		t.Errorf("small copy without a chain: %v; want %v", res.Stop, StopBelowSP)
	}
}
