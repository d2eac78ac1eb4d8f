package compact

import (
	"testing"

	"github.com/macprof/macprof/unwind"
)

// captureLike walks as mach's captureStopped does: the unwind.Stack is a
// local describing a buffer the capture owns.
func captureLike(imgs *Images, w *unwind.Walker, regs unwind.Regs, base uint64, data []byte, dst []uint64) int {
	st := unwind.Stack{Base: base, Data: data, Lo: base, Hi: base + uint64(len(data))}
	pcs, _ := w.WalkCFI(regs, &st, imgs, dst)
	return len(pcs)
}

// TestCaptureLikeWalkDoesNotAllocate checks that a walk over a stack
// described by a local (as the backends do) does not move it to the heap.
func TestCaptureLikeWalkDoesNotAllocate(t *testing.T) {
	for _, arch := range fixtureArchs {
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
		imgs := fixtureImages(t, im, tab)
		dst := make([]uint64, 0, 16)
		if n := captureLike(imgs, w, m.regs(), m.stack.Base, m.stack.Data, dst); n != 3 {
			t.Fatalf("%s: %d frames, want 3", arch, n)
		}
		if a := testing.AllocsPerRun(200, func() { captureLike(imgs, w, m.regs(), m.stack.Base, m.stack.Data, dst) }); a != 0 {
			t.Errorf("%s: %v allocations per walk, want 0", arch, a)
		}
	}
}
