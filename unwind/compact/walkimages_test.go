package compact

import (
	"testing"

	"github.com/macprof/macprof/unwind"
)

// fixtureImages places the fixture image at its link-time address.
func fixtureImages(t testing.TB, im *image, tab *Table) *Images {
	t.Helper()
	imgs, err := NewImages(tab.Arch(), []Image{{Start: im.addr, End: im.addr + uint64(len(im.text)), Base: im.base, Table: tab}})
	if err != nil {
		t.Fatal(err)
	}
	return imgs
}

// mustWalker returns the walker of arch.
func mustWalker(t testing.TB, arch unwind.Arch) *unwind.Walker {
	t.Helper()
	w, err := unwind.NewWalker(unwind.Config{Arch: arch})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestWalkImages walks the fixtures' stacks with unwind's WalkCFI over
// Images: through compact rules, through a frame-pointer frame of code no
// table covers (as JIT code would be), through prologues and epilogues.
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
			w := mustWalker(t, tab.Arch())
			pcs, res := w.WalkCFI(m.regs(), &m.stack, imgs, make([]uint64, 0, 16))
			want := []uint64{leafPC, im.callSite(t, "caller", "leaf_asm"), im.callSite(t, "main", "caller")}
			if !eqSlices(pcs, want) || res.Stop != unwind.StopEnd || res.CFIFrames != 3 {
				t.Errorf("walk %#x %+v, want %#x ending after 3 compact frames", pcs, res, want)
			}
			if a := testing.AllocsPerRun(200, func() { w.WalkCFI(m.regs(), &m.stack, imgs, pcs) }); a != 0 {
				t.Errorf("WalkCFI: %v allocations, want 0", a)
			}
			if pcs, res := w.WalkCFI(m.regs(), &m.stack, imgs, make([]uint64, 0, 2)); len(pcs) != 2 || res.Stop != unwind.StopNoRoom {
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
			pcs, res = w.WalkCFI(m.regs(), &m.stack, imgs, pcs)
			want = []uint64{leafPC, jit + 0x10, mainRet}
			if !eqSlices(pcs, want) || res.Stop != unwind.StopEnd || res.CFIFrames != 2 {
				t.Errorf("walk through JIT %#x %+v, want %#x with one frame-pointer frame", pcs, res, want)
			}

			// A table of the other architecture is not used: the image is
			// walked by frame pointers.
			other := unwind.ArchAMD64
			if tab.Arch() == unwind.ArchAMD64 {
				other = unwind.ArchARM64
			}
			otherImgs, err := NewImages(other, []Image{{Start: im.addr, End: im.addr + uint64(len(im.text)), Base: im.base, Table: tab}})
			if err != nil {
				t.Fatal(err)
			}
			if _, res := mustWalker(t, other).WalkCFI(m.regs(), &m.stack, otherImgs, pcs); res.CFIFrames != 0 {
				t.Errorf("walk as %v with %v tables: %+v, want frame pointers only", other, tab.Arch(), res)
			}

			if !im.arm64 {
				// Right after caller's push %rbp.
				m = newMachine(t, im)
				m.pc = im.sym(t, "main")
				for m.step() {
				}
				mainCaller := im.callSite(t, "main", "caller")
				m.call("caller", mainCaller, 1)
				if pcs, res := w.WalkCFI(m.regs(), &m.stack, imgs, pcs); !eqSlices(pcs, []uint64{im.sym(t, "caller") + 1, mainCaller}) || res.Stop != unwind.StopEnd {
					t.Errorf("walk from after caller's push %%rbp: %#x %+v", pcs, res)
				}
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
			if pcs, res := w.WalkCFI(m.regs(), &m.stack, imgs, pcs); !eqSlices(pcs, []uint64{im.sym(t, "saver") + 4, mainSaver}) || res.Stop != unwind.StopEnd {
				t.Errorf("walk from saver's prologue %#x %+v", pcs, res)
			}
			for m.step() {
			}
			m.x[a64LR] = im.callSite(t, "saver", "caller") // returned from a call
			m.pc = m.x[a64LR]
			if pcs, res := w.WalkCFI(m.regs(), &m.stack, imgs, pcs); !eqSlices(pcs, []uint64{m.pc, mainSaver}) || res.Stop != unwind.StopEnd {
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
			if pcs, res := w.WalkCFI(m.regs(), &m.stack, imgs, pcs); !eqSlices(pcs, []uint64{m.pc, mainCaller}) || res.Stop != unwind.StopEnd {
				t.Errorf("walk from caller's ret %#x %+v", pcs, res)
			}
		})
	}
}

func TestNewImages(t *testing.T) {
	tab := &Table{arch: unwind.ArchARM64}
	if _, err := NewImages(unwind.ArchARM64, []Image{{Start: 0x1000, End: 0x3000, Table: tab}, {Start: 0x2000, End: 0x4000, Table: tab}}); err == nil {
		t.Error("overlapping images accepted")
	}
	imgs, err := NewImages(unwind.ArchARM64, []Image{{Start: 0x5000, End: 0x6000, Base: 0x5000, Table: tab}, {Start: 0x1000, End: 0x2000, Table: tab}, {Start: 0x3000, End: 0x4000}, {Start: 0x7000, End: 0x7000}})
	if err != nil {
		t.Fatal(err)
	}
	for pc, want := range map[uint64]uint64{0xfff: 0, 0x1000: 0x1000, 0x1fff: 0x1000, 0x2000: 0, 0x3500: 0x3000, 0x5800: 0x5000, 0x6000: 0, 0x7000: 0} {
		got := uint64(0)
		if im := imgs.find(pc); im != nil {
			got = im.Start
		}
		if got != want {
			t.Errorf("find(%#x) = image at %#x, want %#x", pc, got, want)
		}
	}
}

// TestLazyTablesAndFallback checks that a walk reaching an image whose
// table is not built asks for it and takes the frame record there, that
// BuildWanted then builds it for the next walk, and that an image whose
// table cannot be built is walked by frame pointers.
func TestLazyTablesAndFallback(t *testing.T) {
	for _, arch := range fixtureArchs {
		t.Run(arch, func(t *testing.T) {
			f, tab, _ := parseFixture(t, arch)
			im := loadImage(t, f)
			m := newMachine(t, im)
			m.pc = im.sym(t, "main")
			for m.step() {
			}
			m.call("caller", im.callSite(t, "main", "caller"), -1)
			m.call("leaf_asm", im.callSite(t, "caller", "leaf_asm"), -1)
			m.pc += 4
			w := mustWalker(t, tab.Arch())
			fpPCs, fpRes := w.Walk(m.regs(), &m.stack, make([]uint64, 0, 16))
			lazy := []Image{{Start: im.addr, End: im.addr + uint64(len(im.text)), Base: im.base, Key: "fixture"}}
			imgs, err := NewImages(tab.Arch(), lazy)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]uint64, 0, 16)
			pcs, r := w.WalkCFI(m.regs(), &m.stack, imgs, dst)
			if !eqSlices(pcs, fpPCs) || r != fpRes {
				t.Errorf("walk before the table is built: %#x %+v; want the frame-pointer walk %#x %+v", pcs, r, fpPCs, fpRes)
			}
			built, err := imgs.BuildWanted(func(got Image) (*Table, error) {
				if got.Key != "fixture" {
					t.Errorf("asked to build %+v", got)
				}
				return tab, nil
			})
			if built != 1 || err != nil {
				t.Fatalf("BuildWanted = %d, %v", built, err)
			}
			pcs, r = w.WalkCFI(m.regs(), &m.stack, imgs, dst)
			want := []uint64{im.sym(t, "leaf_asm") + 4, im.callSite(t, "caller", "leaf_asm"), im.callSite(t, "main", "caller")}
			if !eqSlices(pcs, want) || r.Stop != unwind.StopEnd || r.Hash != unwind.HashPCs(want) || r.CFIFrames != 3 {
				t.Errorf("walk with the table: %#x %+v, want %#x", pcs, r, want)
			}
			if a := testing.AllocsPerRun(200, func() { w.WalkCFI(m.regs(), &m.stack, imgs, dst) }); a != 0 {
				t.Errorf("WalkCFI: %v allocations, want 0", a)
			}
			if n, _ := imgs.BuildWanted(func(Image) (*Table, error) { t.Error("built twice"); return nil, nil }); n != 0 {
				t.Errorf("second BuildWanted built %d", n)
			}

			// A table that cannot be built: frame pointers for that image.
			imgs, _ = NewImages(tab.Arch(), lazy)
			w.WalkCFI(m.regs(), &m.stack, imgs, dst)
			if n, err := imgs.BuildWanted(func(Image) (*Table, error) { return nil, ErrNoUnwindInfo }); n != 0 || err != nil {
				t.Errorf("BuildWanted of an image without __unwind_info = %d, %v", n, err)
			}
			pcs, r = w.WalkCFI(m.regs(), &m.stack, imgs, dst)
			if !eqSlices(pcs, fpPCs) || r.CFIFrames != 0 || r.Hash != unwind.HashPCs(pcs) {
				t.Errorf("walk of an image without a table: %#x %+v", pcs, r)
			}
			if a := testing.AllocsPerRun(200, func() { w.WalkCFI(m.regs(), &m.stack, imgs, dst) }); a != 0 {
				t.Errorf("WalkCFI by frame pointers: %v allocations, want 0", a)
			}
		})
	}
}
