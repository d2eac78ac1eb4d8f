package compact

import "github.com/macprof/macprof/unwind"

// The unwind.Rule of each kind of compact rule, as CompactUnwinder.hpp
// steps them (stepWithCompactEncodingFrame and ...Frameless for arm64,
// frameUnwind and framelessUnwind for x86_64).
var (
	// frameRule: the frame record at FP holds the caller's FP and the
	// return address; the caller's SP is FP+16 (both architectures).
	frameRule = unwind.Rule{CFA: unwind.CFAFP, CFAOff: 16, FP: unwind.RegSaved, FPOff: -16, RA: unwind.RegSaved, RAOff: -8, Body: true}
	// entryRule: at a function's first instruction nothing is pushed
	// yet: the return address is at SP (x86_64) or in LR (arm64).
	entryRule = [...]unwind.Rule{
		unwind.ArchAMD64: {CFA: unwind.CFASP, CFAOff: 8, RA: unwind.RegSaved, RAOff: -8},
		unwind.ArchARM64: {CFA: unwind.CFASP, RA: unwind.RegSame},
	}
	// pushedRBPRule: x86_64, one byte into an RBP-frame function: only
	// the one-byte "push %rbp" can end there, and "mov %rsp, %rbp" has
	// not run (compact_unwind_encoding.h, UNWIND_X86_64_MODE_RBP_FRAME:
	// RBP is pushed right after the return address).
	pushedRBPRule = unwind.Rule{CFA: unwind.CFASP, CFAOff: 16, FP: unwind.RegSaved, FPOff: -16, RA: unwind.RegSaved, RAOff: -8}
)

// toWalk returns the unwind.Rule of a decoded compact rule for the
// function's body; CFANone where the rule gives none (no information, an
// invalid encoding, DWARF mode), so that a walk takes the frame record.
func toWalk(arch unwind.Arch, r *Decoded) unwind.Rule {
	switch r.Kind {
	case KindFrame:
		return frameRule
	case KindFrameless:
		if arch == unwind.ArchARM64 {
			// The return address is in LR: only the interrupted
			// frame may be frameless (a walk ends at one further out).
			return unwind.Rule{CFA: unwind.CFASP, CFAOff: int32(r.StackSize), RA: unwind.RegSame}
		}
		// The return address lies at SP+StackSize-8, the NRegs saved
		// registers just below it.
		w := unwind.Rule{CFA: unwind.CFASP, CFAOff: int32(r.StackSize), RA: unwind.RegSaved, RAOff: -8}
		if r.rbpSlot != 0 {
			w.FP, w.FPOff = unwind.RegSaved, -8-8*int32(r.NRegs)+8*int32(r.rbpSlot-1)
		}
		return w
	}
	return unwind.Rule{}
}

// walkRule returns the unwind rule of the code at image offset off, nil
// where the table gives none; a DWARF-mode entry's is the row of its FDE
// in the image's __eh_frame, where the table has it. Otherwise, at a
// function's first instruction (and on x86_64 after its "push %rbp") it
// is the prologue's rule: a walk looks up a return address minus one,
// which never lands there, so only the interrupted frame gets it.
func (t *Table) walkRule(off uint32) *unwind.Rule {
	i, start, _, ok := t.index(off)
	if !ok {
		return nil
	}
	ri := t.rule[i]
	r := &t.walk[ri]
	if slot := t.dwarf[ri]; slot >= 0 && t.eh != nil {
		// DWARF mode: the FDE's row, compiled on first use.
		if d := t.eh.Find(int(slot), uint64(off)); d != nil {
			return d
		}
	}
	switch {
	case off == start:
		return &entryRule[t.arch]
	case off == start+1 && t.arch == unwind.ArchAMD64 && r.CFA == unwind.CFAFP:
		return &pushedRBPRule
	case r.CFA == unwind.CFANone:
		return nil
	}
	return r
}

// Rule returns the rule of the code at pc, nil where no built table of
// the walk's architecture covers it (the walk then takes the frame record
// at FP, as for code no image holds, JIT code): unwind.Tables. A PC in an
// image whose table is not built yet marks it wanted for BuildWanted.
// Answers from built tables are remembered by PC, so Rule and Func are for
// one walk at a time (a Target's captures are); BuildWanted may run
// beside them. It does not allocate.
func (s *Images) Rule(pc uint64) (*unwind.Rule, bool) {
	if s == nil {
		return nil, false
	}
	if r, _, ok := s.rules.Get(pc); ok {
		return r, false
	}
	r, ok := s.rule(pc)
	if ok {
		s.rules.Put(pc, r, false)
	}
	return r, false
}

// RuleCache returns the cache of Rule's answers: unwind.Cached, so that
// a walk finds the rules it holds without calling Rule.
func (s *Images) RuleCache() *unwind.RuleCache {
	if s == nil {
		return nil
	}
	return s.rules
}

// rule is Rule without the cache; ok says the answer came from a built
// table (and may be remembered).
func (s *Images) rule(pc uint64) (_ *unwind.Rule, ok bool) {
	sl := s.find(pc)
	if sl == nil {
		return nil, true // no image: none will come
	}
	tab := sl.table.Load()
	if tab == nil {
		if !sl.failed.Load() && !sl.wanted.Load() {
			sl.wanted.Store(true)
		}
		return nil, false
	}
	// A table of another architecture (an arm64 image in a Rosetta
	// process walked as x86_64) does not apply.
	if tab.arch != s.arch || pc-sl.Base >= 1<<32 {
		return nil, true
	}
	return tab.walkRule(uint32(pc - sl.Base)), true
}

// Func returns the bounds of the function whose compact entry covers pc:
// unwind.FuncBounds.
func (s *Images) Func(pc uint64) (start, end uint64, ok bool) {
	sl := s.find(pc)
	if sl == nil {
		return 0, 0, false
	}
	tab := sl.table.Load()
	if tab == nil || pc-sl.Base >= 1<<32 {
		return 0, 0, false
	}
	_, st, en, ok := tab.index(uint32(pc - sl.Base))
	return sl.Base + uint64(st), sl.Base + uint64(en), ok
}

var (
	_ unwind.Tables     = (*Images)(nil)
	_ unwind.FuncBounds = (*Images)(nil)
	_ unwind.Cached     = (*Images)(nil)
)
