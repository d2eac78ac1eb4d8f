package compact

import (
	"strings"
	"testing"

	"github.com/macprof/macprof/unwind"
)

// checkSlots verifies that the registers a rule says were saved lie where
// the rule says: each slot holds the marker value of its register.
func checkSlots(t *testing.T, m *machine, r *Decoded, regs unwind.Regs) {
	t.Helper()
	x86Num := map[Reg]int{RegRBX: 3, RegR12: 12, RegR13: 13, RegR14: 14, RegR15: 15, RegRBP: 5}
	switch {
	case m.im.arm64 && r.Kind == KindFrame:
		// Pairs lie below the frame record in register order, the
		// lower-numbered register of each pair higher (CompactUnwinder.hpp,
		// stepWithCompactEncodingFrame).
		at := regs.FP - 8
		for i, lo := range []int{19, 21, 23, 25, 27} {
			if r.Pairs&(1<<i) == 0 {
				continue
			}
			for _, reg := range []int{lo, lo + 1} {
				if got, want := m.load(at), uint64(0x1111_0000+reg); got != want {
					t.Errorf("%s: x%d slot at FP-%d holds %#x, want %#x", m.im.name(regs.PC), reg, regs.FP-at, got, want)
				}
				at -= 8
			}
		}
	case !m.im.arm64 && r.Kind == KindFrame:
		for i := 0; i < 5; i++ {
			if r.Regs[i] == RegNone {
				continue
			}
			at := regs.FP - uint64(r.RegsOffset) + 8*uint64(i)
			if got, want := m.load(at), uint64(0x1111_0000+x86Num[r.Regs[i]]); got != want {
				t.Errorf("%s: %v slot at RBP-%d holds %#x, want %#x", m.im.name(regs.PC), r.Regs[i], regs.FP-at, got, want)
			}
		}
	case !m.im.arm64 && r.Kind == KindFrameless:
		for i := 0; i < int(r.NRegs); i++ {
			at := regs.SP + uint64(r.StackSize) - 8 - 8*uint64(r.NRegs) + 8*uint64(i)
			if got, want := m.load(at), uint64(0x1111_0000+x86Num[r.Regs[i]]); got != want {
				t.Errorf("%s: %v slot at SP+%d holds %#x, want %#x", m.im.name(regs.PC), r.Regs[i], at-regs.SP, got, want)
			}
		}
	}
}

// TestWalkFixtureStacks builds real stacks for the fixtures' call chains by
// executing each function's prologue (pushes, stores, frame set-up, stack
// allocation) from its own code, then walks them with the compact unwind
// table: the walk must name every function of the chain once, innermost
// first, and end where the chain ends.
func TestWalkFixtureStacks(t *testing.T) {
	type chain struct {
		calls   string // outermost first
		advance int    // bytes past the innermost function's prologue where the sample lands
		want    string // functions the walk names, innermost first
	}
	cases := map[string][]chain{
		"arm64": {
			{"main caller leaf_asm", 4, "leaf_asm caller main"},
			{"main saver caller leaf_asm", 8, "leaf_asm caller saver main"},
			{"main cleanup_user leaf_asm", 4, "leaf_asm cleanup_user main"},
			{"main caller", -1, "caller main"}, // at caller's first instruction
			{"main saver", 0, "saver main"},
			// -fomit-frame-pointer on arm64 gives DWARF-mode entries,
			// which lld-14 points at __eh_frame offset 0 (a CIE): the
			// walk takes the frame record at FP there, main's, whose
			// return address is zero here.
			{"main nofp_caller leaf_asm", 4, "leaf_asm nofp_caller"},
			{"main nofp_big sink", 4, "sink nofp_big"},
		},
		"x86_64": {
			{"main caller leaf_asm", 4, "leaf_asm caller main"},
			{"main saver caller leaf_asm", 7, "leaf_asm caller saver main"},
			{"main nofp_caller leaf_asm", 4, "leaf_asm nofp_caller main"},
			{"main nofp_big leaf_asm", 4, "leaf_asm nofp_big main"},
			{"main cleanup_user leaf_asm", 4, "leaf_asm cleanup_user main"},
			{"main caller", -1, "caller main"},
			{"main nofp_big", 0, "nofp_big main"},
			// lld-14 gives sink (whose unwind info MC put in __eh_frame)
			// encoding 0: the walk is the frame-pointer walk, which
			// finds main's record, whose return address is zero here.
			{"main nofp_big sink", 2, "sink"},
		},
	}
	for _, arch := range fixtureArchs {
		t.Run(arch, func(t *testing.T) {
			f, tab, _ := parseFixture(t, arch)
			im := loadImage(t, f)
			imgs := fixtureImages(t, im, tab)
			for _, c := range cases[arch] {
				t.Run(strings.ReplaceAll(c.calls, " ", ">"), func(t *testing.T) {
					m := newMachine(t, im)
					fns := strings.Fields(c.calls)
					m.pc = im.sym(t, fns[0])
					for i, fn := range fns {
						n := -1
						if i == len(fns)-1 && c.advance < 0 {
							n = 0 // sampled at the first instruction
						}
						if i == 0 {
							for n != 0 && m.step() {
							}
						} else {
							m.call(fn, im.callSite(t, fns[i-1], fn), n)
						}
					}
					if c.advance > 0 {
						m.pc += uint64(c.advance)
					}
					// The walk names the chain.
					pcs, res := mustWalker(t, tab.Arch()).WalkCFI(m.regs(), &m.stack, imgs, make([]uint64, 0, 16))
					var got []string
					for i, pc := range pcs {
						if i > 0 {
							pc--
						}
						got = append(got, im.name(pc))
					}
					if g := strings.Join(got, " "); g != c.want || res.Stop != unwind.StopEnd {
						t.Errorf("walk named %q and ended with %v, want %q and the end of the chain", g, res.Stop, c.want)
					}
					// Every frame's saved-register slots lie where its
					// compact rule says.
					regs := m.regs()
					for i := range pcs {
						lookup := regs.PC
						if i > 0 {
							lookup--
						}
						r, ok := tab.Lookup(uint32(lookup - im.base))
						if !ok {
							t.Fatalf("no rule for %#x (%s)", lookup, im.name(lookup))
						}
						wr, _ := imgs.Rule(lookup)
						if wr == nil || i == len(pcs)-1 {
							break
						}
						if i > 0 || regs.PC-im.base != uint64(r.Start) {
							checkSlots(t, m, &r, regs)
						}
						regs = applyRule(m, wr, regs, pcs[i+1])
					}
				})
			}
		})
	}
}

// applyRule returns the caller's registers by rule r from regs, the
// return address being ret (the walk's), so that checkSlots can look at
// every frame of the chain.
func applyRule(m *machine, r *unwind.Rule, regs unwind.Regs, ret uint64) unwind.Regs {
	cfa := regs.SP + uint64(int64(r.CFAOff))
	if r.CFA == unwind.CFAFP {
		cfa = regs.FP + uint64(int64(r.CFAOff))
	}
	fp := regs.FP
	if r.FP == unwind.RegSaved {
		fp = m.load(cfa + uint64(int64(r.FPOff)))
	}
	return unwind.Regs{PC: ret, SP: cfa, FP: fp}
}
