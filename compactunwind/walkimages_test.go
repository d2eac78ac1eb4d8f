package compactunwind

import (
	"testing"

	"github.com/macprof/macprof/unwind"
)

// fixtureImages places the fixture image at its link-time address.
func fixtureImages(t testing.TB, im *image, tab *Table) *Images {
	t.Helper()
	imgs, err := NewImages([]Image{{Start: im.addr, End: im.addr + uint64(len(im.text)), Base: im.base, Table: tab}})
	if err != nil {
		t.Fatal(err)
	}
	return imgs
}

// TestWalkImages walks the fixtures' stacks with Stepper.Walk: through
// compact rules, through a frame-pointer frame of code no table covers
// (as JIT code would be), and up to a frame that needs DWARF CFI.
func TestWalkImages(t *testing.T) {
	const jit = 0x2_0000_0000 // code outside every image
	for _, arch := range fixtureArchs {
		t.Run(arch, func(t *testing.T) {
			f, tab, _ := parseFixture(t, arch)
			im := loadImage(t, f)
			imgs := fixtureImages(t, im, tab)
			leafPC := im.sym(t, "leaf_asm") + 4

			// main > caller > leaf_asm, all by compact rules.
			m := newMachine(t, im)
			m.pc = im.sym(t, "main")
			for m.step() {
			}
			m.call("caller", im.callSite(t, "main", "caller"), -1)
			m.call("leaf_asm", im.callSite(t, "caller", "leaf_asm"), -1)
			m.pc += 4
			s := &Stepper{Arch: tab.Arch(), Stack: &m.stack}
			pcs, res := s.Walk(imgs, m.regs(), make([]uint64, 0, 16))
			want := []uint64{leafPC, im.callSite(t, "caller", "leaf_asm"), im.callSite(t, "main", "caller")}
			if !eqSlices(pcs, want) || res.Stop != StepEnd || res.CompactFrames != 3 || res.FPFrames != 0 {
				t.Errorf("walk %#x %+v, want %#x ending with %v after 3 compact frames", pcs, res, want, StepEnd)
			}
			if a := testing.AllocsPerRun(200, func() { s.Walk(imgs, m.regs(), pcs) }); a != 0 {
				t.Errorf("Walk: %v allocations, want 0", a)
			}
			if pcs, res := s.Walk(imgs, m.regs(), make([]uint64, 0, 2)); len(pcs) != 2 || !res.Full {
				t.Errorf("walk into 2 slots: %#x %+v", pcs, res)
			}

			// main > JIT code with a frame record > leaf_asm.
			m = newMachine(t, im)
			m.pc = im.sym(t, "main")
			for m.step() {
			}
			mainRet := im.callSite(t, "main", "caller")
			if im.arm64 {
				// stp x29, x30, [sp, #-16]!; mov x29, sp
				m.x[a64SP] -= 16
				m.store(m.x[a64SP], m.x[a64FP])
				m.store(m.x[a64SP]+8, mainRet)
				m.x[a64FP] = m.x[a64SP]
				m.x[a64LR] = jit + 0x10
			} else {
				m.push(mainRet)
				m.push(m.x[x86RBP]) // push rbp; mov rsp, rbp
				m.x[x86RBP] = m.x[x86RSP]
				m.push(jit + 0x10)
			}
			m.pc = leafPC
			s.Stack = &m.stack
			pcs, res = s.Walk(imgs, m.regs(), pcs)
			want = []uint64{leafPC, jit + 0x10, mainRet}
			if !eqSlices(pcs, want) || res.Stop != StepEnd || res.CompactFrames != 2 || res.FPFrames != 1 {
				t.Errorf("walk through JIT %#x %+v, want %#x with one frame-pointer frame", pcs, res, want)
			}

			if !im.arm64 {
				return
			}
			// The innermost frame in a prologue, an epilogue, and a body
			// whose LR is stale after a call of its own.
			mainSaver := im.callSite(t, "main", "saver")
			m = newMachine(t, im)
			m.pc = im.sym(t, "main")
			for m.step() {
			}
			m.call("saver", mainSaver, 1) // after its first stp, before add x29
			s.Stack = &m.stack
			if pcs, res := s.Walk(imgs, m.regs(), pcs); !eqSlices(pcs, []uint64{im.sym(t, "saver") + 4, mainSaver}) || res.Stop != StepEnd {
				t.Errorf("walk from saver's prologue %#x %+v", pcs, res)
			}
			for m.step() {
			}
			m.x[a64LR] = im.callSite(t, "saver", "caller") // returned from a call
			m.pc = m.x[a64LR]
			if pcs, res := s.Walk(imgs, m.regs(), pcs); !eqSlices(pcs, []uint64{m.pc, mainSaver}) || res.Stop != StepEnd {
				t.Errorf("walk from saver's body with a stale LR %#x %+v", pcs, res)
			}
			m = newMachine(t, im)
			m.pc = im.sym(t, "main")
			for m.step() {
			}
			mainCaller := im.callSite(t, "main", "caller")
			m.call("caller", mainCaller, -1)
			// ldp x29, x30, [sp], #16: the epilogue, up to the ret.
			m.x[a64FP], m.x[a64LR] = m.load(m.x[a64SP]), m.load(m.x[a64SP]+8)
			m.x[a64SP] += 16
			for m.im.u32(m.pc) != 0xd65f03c0 {
				m.pc += 4
			}
			s.Stack = &m.stack
			if pcs, res := s.Walk(imgs, m.regs(), pcs); !eqSlices(pcs, []uint64{m.pc, mainCaller}) || res.Stop != StepEnd {
				t.Errorf("walk from caller's ret %#x %+v", pcs, res)
			}
			// main > nofp_caller (DWARF-mode on arm64) > leaf_asm.
			m = newMachine(t, im)
			m.pc = im.sym(t, "main")
			for m.step() {
			}
			m.call("nofp_caller", im.callSite(t, "main", "nofp_caller"), -1)
			m.call("leaf_asm", im.callSite(t, "nofp_caller", "leaf_asm"), -1)
			m.pc += 4
			s.Stack = &m.stack
			pcs, res = s.Walk(imgs, m.regs(), pcs)
			ret := im.callSite(t, "nofp_caller", "leaf_asm")
			if !eqSlices(pcs, []uint64{leafPC, ret}) || res.Stop != StepDWARF || res.Image == nil || res.Rule.Kind != KindDWARF || res.Regs.PC != ret {
				t.Errorf("walk to a DWARF frame %#x %+v", pcs, res)
			}
		})
	}
}

func TestNewImages(t *testing.T) {
	tab := &Table{arch: unwind.ArchARM64}
	if _, err := NewImages([]Image{{Start: 0x1000, End: 0x3000, Table: tab}, {Start: 0x2000, End: 0x4000, Table: tab}}); err == nil {
		t.Error("overlapping images accepted")
	}
	imgs, err := NewImages([]Image{{Start: 0x5000, End: 0x6000, Base: 0x5000, Table: tab}, {Start: 0x1000, End: 0x2000, Table: tab}, {Start: 0x3000, End: 0x4000}})
	if err != nil {
		t.Fatal(err)
	}
	for pc, want := range map[uint64]uint64{0xfff: 0, 0x1000: 0x1000, 0x1fff: 0x1000, 0x2000: 0, 0x3500: 0, 0x5800: 0x5000, 0x6000: 0} {
		got := uint64(0)
		if im := imgs.find(pc); im != nil {
			got = im.Start
		}
		if got != want {
			t.Errorf("find(%#x) = image at %#x, want %#x", pc, got, want)
		}
	}
}
