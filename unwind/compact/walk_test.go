package compact

import (
	"strings"
	"testing"

	"github.com/macprof/macprof/unwind"
)

// checkSlots verifies that the registers a rule says were saved lie where
// the rule says: each slot holds the marker value of its register.
func checkSlots(t *testing.T, m *machine, r *Rule, regs unwind.Regs) {
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
		stop    Status
	}
	cases := map[string][]chain{
		"arm64": {
			{"main caller leaf_asm", 4, "leaf_asm caller main", StepEnd},
			{"main saver caller leaf_asm", 8, "leaf_asm caller saver main", StepEnd},
			{"main cleanup_user leaf_asm", 4, "leaf_asm cleanup_user main", StepEnd},
			{"main caller", -1, "caller main", StepEnd}, // at caller's first instruction
			{"main saver", 0, "saver main", StepEnd},
			// -fomit-frame-pointer on arm64 gives DWARF-mode entries.
			{"main nofp_caller leaf_asm", 4, "leaf_asm nofp_caller", StepDWARF},
			{"main nofp_big sink", 4, "sink nofp_big", StepDWARF},
		},
		"x86_64": {
			{"main caller leaf_asm", 4, "leaf_asm caller main", StepEnd},
			{"main saver caller leaf_asm", 7, "leaf_asm caller saver main", StepEnd},
			{"main nofp_caller leaf_asm", 4, "leaf_asm nofp_caller main", StepEnd},
			{"main nofp_big leaf_asm", 4, "leaf_asm nofp_big main", StepEnd},
			{"main cleanup_user leaf_asm", 4, "leaf_asm cleanup_user main", StepEnd},
			{"main caller", -1, "caller main", StepEnd},
			{"main nofp_big", 0, "nofp_big main", StepEnd},
			// lld-14 gives sink (whose unwind info MC put in __eh_frame) encoding 0.
			{"main nofp_big sink", 2, "sink", StepNoInfo},
		},
	}
	for _, arch := range fixtureArchs {
		t.Run(arch, func(t *testing.T) {
			f, tab, _ := parseFixture(t, arch)
			im := loadImage(t, f)
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
					s := &Stepper{Arch: tab.Arch(), Stack: m.stack}
					// Check the saved-register slots of every frame on the way.
					regs := m.regs()
					var got []string
					var st Status
					var last Rule
					for i := 0; i < 16; i++ {
						lookup := regs.PC
						if i > 0 {
							lookup--
						}
						got = append(got, im.name(lookup))
						r, ok := tab.Lookup(uint32(lookup - im.base))
						if !ok {
							t.Fatalf("no rule for %#x (%s)", lookup, im.name(lookup))
						}
						last = r
						atStart := i == 0 && regs.PC-im.base == uint64(r.Start)
						if !atStart {
							checkSlots(t, m, &r, regs)
						}
						if regs, st = s.Step(&r, regs, atStart); st != StepOK {
							break
						}
					}
					if g := strings.Join(got, " "); g != c.want || st != c.stop {
						t.Errorf("walk named %q and ended with %v, want %q and %v", g, st, c.want, c.stop)
					}
					if st == StepDWARF && (last.Kind != KindDWARF || last.DWARFOffset != last.Encoding&0xFFFFFF) {
						t.Errorf("DWARF stop with rule %+v", last)
					}
				})
			}
		})
	}
}
