package ptrace

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// TestAutoWalkSteppedThroughTheVDSO single-steps the thread of vdsoloop
// (built without frame pointers) through one whole vDSO call, from the
// function's first instruction to its return, and walks its stack at every
// instruction as --unwind auto walks a stack copy (resolverOf without the
// vDSO's table, a Target's walker): each walk must give the callers the
// walk at the entry gives, where the return address is the word at SP.
// At the entry, after its push of the frame pointer and in its epilogue
// the vDSO function has no frame record of its own, and the frame pointer
// holds whatever the caller, built without them, left there.
func TestAutoWalkSteppedThroughTheVDSO(t *testing.T) {
	bin := testprog.BuildCNoFP(t, "vdsoloop.c")
	p := testprog.Start(t, bin, "60")
	tid := 0
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", p.PID))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tasks {
		if id := 0; func() bool { _, err := fmt.Sscan(e.Name(), &id); return err == nil }() && id != p.PID {
			tid = id
		}
	}
	if tid == 0 {
		t.Fatalf("vdsoloop (PID %d) has no thread but main", p.PID)
	}

	regions, err := readRegions(p.PID)
	if err != nil {
		t.Fatal(err)
	}
	imgs := regions.ELFImages()
	var vdso uint64
	for _, im := range imgs {
		if im.Path == "[vdso]" {
			im.Memory = vdsoMemory(im, nil)
			vdso = im.Start
		}
	}
	set := images.NewSet(imgs)
	vim := set.Lookup(vdso)
	var prog *images.Image
	for _, im := range imgs {
		if im.Path == bin {
			prog = im
		}
	}
	if prog == nil {
		t.Fatalf("no %s among %v", bin, imgs)
	}
	if vim == nil || !sameVDSO(vim) {
		t.Fatalf("vdsoloop's [vdso] %v is not the profiler's", vim)
	}
	tables := resolverOf(set, vdsoTableUse(walkPlanOf(unwind.MethodAuto)))
	w, err := newWalker(target.Options{Unwind: unwind.MethodAuto, MaxFrames: 64}, &memReader{pid: p.PID})
	if err != nil {
		t.Fatal(err)
	}

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.PtraceAttach(tid); err != nil {
		t.Fatalf("attach thread %d: %v", tid, err)
	}
	defer unix.PtraceDetach(tid)
	wait := func() {
		t.Helper()
		for range 100 {
			var ws unix.WaitStatus
			if _, err := unix.Wait4(tid, &ws, unix.WALL, nil); err != nil {
				t.Fatal(err)
			}
			if !ws.Stopped() {
				t.Fatalf("thread %d: wait status %#x, want a stop", tid, ws)
			}
			if ws.StopSignal() == unix.SIGTRAP || ws.StopSignal() == unix.SIGSTOP {
				return
			}
			if err := unix.PtraceSingleStep(tid); err != nil {
				t.Fatal(err)
			}
		}
		t.Fatalf("thread %d: no SIGTRAP stop in 100", tid)
	}
	wait() // the attach's SIGSTOP

	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", p.PID))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	var regs unix.PtraceRegs
	var entry []uint64 // the callers walked at the vDSO function's entry
	steps, outside := 0, false
	dst := make([]uint64, 0, 64)
	for i := 0; i < 20000; i++ {
		if err := unix.PtraceGetRegs(tid, &regs); err != nil {
			t.Fatal(err)
		}
		in := vim.Contains(regs.Rip)
		if !in && entry != nil {
			break // returned
		}
		outside = outside || !in // the attach may stop it within a call
		if in && outside {
			lo, hi, ok := regions.StackBounds(regs.Rsp)
			if !ok {
				t.Fatalf("SP %#x in no stack mapping", regs.Rsp)
			}
			buf := make([]byte, min(hi-regs.Rsp, 16<<10))
			if _, err := mem.ReadAt(buf, int64(regs.Rsp)); err != nil {
				t.Fatal(err)
			}
			st := &unwind.Stack{Base: regs.Rsp, Data: buf, Lo: lo, Hi: hi}
			pcs, res := w.WalkCFI(unwind.Regs{PC: regs.Rip, SP: regs.Rsp, FP: regs.Rbp}, st, tables, dst)
			at := fmt.Sprintf("[vdso]+%#x", regs.Rip-vim.Start)
			if entry == nil {
				ret := uint64(0)
				for j := range 8 {
					ret |= uint64(buf[j]) << (8 * j)
				}
				if len(pcs) < 3 || pcs[1] != ret || res.Stop.Truncated() || !slices.ContainsFunc(pcs, prog.Contains) {
					t.Fatalf("entry %s: walk %#x (%v), want the return address %#x at SP, the program's code and on to the outermost frame", at, pcs, res.Stop, ret)
				}
				entry = slices.Clone(pcs[1:])
			} else if !slices.Equal(pcs[1:], entry) || res.Stop.Truncated() {
				t.Errorf("%s (step %d in the vdso): callers %#x (%v), want %#x as at the entry", at, steps, pcs[1:], res.Stop, entry)
			}
			steps++
		}
		if err := unix.PtraceSingleStep(tid); err != nil {
			t.Fatal(err)
		}
		wait()
	}
	if entry == nil || steps < 20 {
		t.Fatalf("%d steps in the vdso, want one call of at least 20 walked", steps)
	}
	t.Logf("%d instructions of one vdso call walked, callers %#x", steps, entry)
}
