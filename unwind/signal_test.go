package unwind

import (
	"slices"
	"testing"
)

// sigTables maps code ranges to rules: a handler, a signal trampoline at
// sigT (its FDE starting a byte before, as glibc's), a function F whose
// first byte follows another function's last, and the outermost caller.
type sigTables struct{ handler, tramp, fEntry, before, outer Rule }

const (
	sigH = 0x41_0000 // the handler's code
	sigT = 0x42_0000 // the trampoline; its FDE starts at sigT-1
	sigF = 0x43_0000 // F's first byte; the function before ends at sigF-1
	sigC = 0x44_0000 // the outermost caller
)

func (s *sigTables) Rule(pc uint64) (*Rule, bool) {
	switch {
	case pc >= sigH && pc < sigH+0x100:
		return &s.handler, false
	case pc >= sigT-1 && pc < sigT+0x10:
		return &s.tramp, false
	case pc >= sigF && pc < sigF+0x100:
		return &s.fEntry, false
	case pc >= sigF-0x100 && pc < sigF:
		return &s.before, false
	case pc >= sigC && pc < sigC+0x100:
		return &s.outer, false
	}
	return nil, false
}

// TestWalkCFISignalFrame: a signal frame's rule (CFA read at SP+160, FP
// and the return address at SP plus their offsets) gives the interrupted
// PC, which the walk looks up as it is: at F's first byte, F's rule (its
// return address at SP), not the rule of the function before, which pc-1
// would find. Without Signal the walk takes the function before's rule
// and reads another slot.
func TestWalkCFISignalFrame(t *testing.T) {
	tabs := &sigTables{
		handler: Rule{CFA: CFASP, CFAOff: 16, RA: RegSaved, RAOff: -8, FP: RegSame},
		tramp:   Rule{CFA: CFADerefSP, CFAOff: 160, RA: RegSavedSP, RAOff: 168, FP: RegSavedSP, FPOff: 120, Signal: true},
		fEntry:  Rule{CFA: CFASP, CFAOff: 8, RA: RegSaved, RAOff: -8, FP: RegSame},
		before:  Rule{CFA: CFASP, CFAOff: 64, RA: RegSaved, RAOff: -8, FP: RegSame},
		outer:   Rule{CFA: CFASP, CFAOff: 8, RA: RegUndefined, FP: RegSame},
	}
	s := newSynth(testBase, 4096)
	sp0 := uint64(testBase)
	s.word(sp0+8, sigT)            // the handler returns to the trampoline
	sp1 := sp0 + 16                // the trampoline's SP: the ucontext's base
	sp2 := uint64(testBase + 1024) // the interrupted SP
	s.word(sp1+160, sp2)
	s.word(sp1+168, sigF)  // the interrupted PC
	s.word(sp1+120, 0x77)  // the interrupted FP
	s.word(sp2, sigC+0x10) // F's return address, at its entry
	s.word(sp2+56, sigH+0x20)
	w := mustWalker(t, Config{Arch: ArchAMD64})
	regs := Regs{PC: sigH + 0x10, SP: sp0, FP: 0x99}
	got, res := w.WalkCFI(regs, s.stack(), tabs, make([]uint64, 0, 16))
	want := []uint64{sigH + 0x10, sigT, sigF, sigC + 0x10}
	if !slices.Equal(got, want) || res.Stop != StopEnd || res.CFIFrames != 3 {
		t.Fatalf("walk %#x (%v, %d frames by tables), want %#x", got, res.Stop, res.CFIFrames, want)
	}
	checkHash(t, got, res)
	tabs.tramp.Signal = false
	got, _ = w.WalkCFI(regs, s.stack(), tabs, make([]uint64, 0, 16))
	if len(got) < 4 || got[3] != sigH+0x20 {
		t.Fatalf("without Signal: walk %#x, want the slot the rule at F-1 gives (%#x) fourth", got, sigH+0x20)
	}
	tabs.tramp.Signal = true
	st, dst := s.stack(), make([]uint64, 0, 16)
	if n := testing.AllocsPerRun(100, func() { w.WalkCFI(regs, st, tabs, dst) }); n != 0 {
		t.Errorf("WalkCFI allocates %v times", n)
	}
}
