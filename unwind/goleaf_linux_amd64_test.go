package unwind_test

import (
	"debug/elf"
	"fmt"
	"os"
	"slices"
	"sort"
	"testing"

	"github.com/macprof/macprof/unwind"
	"github.com/macprof/macprof/unwind/cfi"
	"golang.org/x/sys/unix"
)

// TestWalkCFIGoLeaf stops a real Go program (testdata/goleaf, built by the
// test) at the entry of main.mid and single-steps it through mid's
// prologue, its call of main.spin (a leaf that sets up no frame) and
// spin's loop, walking the stack at every instruction with the tables a
// profiler has (cfi.Resolver): each walk must hold the function's direct
// caller, main.main for mid and mid for spin, which the frame record at
// FP, still the caller's there, would skip.
func TestWalkCFIGoLeaf(t *testing.T) {
	bin := buildTestdataGo(t, "goleaf")
	prog := loadGoProgram(t, bin)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	var objs []cfi.Object
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			objs = append(objs, cfi.Object{Start: p.Vaddr, Limit: p.Vaddr + p.Memsz, Offset: p.Off, Key: bin, Path: bin})
		}
	}
	f.Close()
	tables := cfi.NewResolver(cfi.NewCache(cfi.CacheOptions{}), objs)
	name := func(pc uint64) string {
		j := sort.Search(len(prog.funcs), func(j int) bool { return prog.funcs[j].Value > pc }) - 1
		if j < 0 || pc >= prog.funcs[j].Value+max(prog.funcs[j].Size, 1) {
			return "?"
		}
		return prog.funcs[j].Name
	}
	var mid uint64
	for _, s := range prog.funcs {
		if s.Name == "main.mid" {
			mid = s.Value
		}
	}
	if mid == 0 {
		t.Fatal("no main.mid in testdata/goleaf")
	}

	pid := startTraced(t, bin, "GOMAXPROCS=1") // main stays on its thread
	wait := func(step bool) { waitTrap(t, pid, step) }
	var regs unix.PtraceRegs
	// toMid runs the program to main.mid's entry.
	toMid := func() {
		t.Helper()
		regs = runTo(t, pid, mid)
	}
	toMid()

	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	w := unwind.MustWalker(t, unwind.Config{Arch: unwind.ArchAMD64})
	buf := make([]byte, 4<<10) // main's goroutine stack, from SP up
	dst := make([]uint64, 0, 64)
	want := map[string]string{"main.mid": "main.main", "main.spin": "main.mid"}
	seen := map[string]int{}
	for step := 0; step < 400; step++ {
		fn := name(regs.Rip)
		caller, ok := want[fn]
		switch {
		case !ok && fn == "main.main" && step > 0:
			// mid returned: the loop ends below.
		case !ok && seen["morestack"] < 3 && fn != "main.main":
			// The stack check called morestack (the goroutine's stack
			// was shrunk by a GC): mid starts again once it grew.
			seen["morestack"]++
			toMid()
			continue
		case !ok:
			t.Fatalf("step %d at %#x in %s", step, regs.Rip, fn)
		}
		if !ok {
			break
		}
		if _, err := mem.ReadAt(buf, int64(regs.Rsp)); err != nil {
			t.Fatal(err)
		}
		st := &unwind.Stack{Base: regs.Rsp, Data: buf, Lo: regs.Rsp, Hi: regs.Rsp + uint64(len(buf))}
		pcs, _ := w.WalkCFI(unwind.Regs{PC: regs.Rip, SP: regs.Rsp, FP: regs.Rbp}, st, tables, dst)
		var got []string
		for i, pc := range pcs {
			if i > 0 {
				pc--
			}
			got = append(got, name(pc))
		}
		if len(got) < 3 || got[0] != fn || got[1] != caller || !slices.Contains(got, "runtime.main") {
			t.Fatalf("step %d at %#x (%s+%#x): walk %v, want %s, %s, ..., runtime.main", step, regs.Rip, fn, regs.Rip-prog.funcs[sort.Search(len(prog.funcs), func(j int) bool { return prog.funcs[j].Value > regs.Rip })-1].Value, got, fn, caller)
		}
		seen[fn]++
		if err := unix.PtraceSingleStep(pid); err != nil {
			t.Fatal(err)
		}
		wait(true)
		if err := unix.PtraceGetRegs(pid, &regs); err != nil {
			t.Fatal(err)
		}
	}
	if seen["main.mid"] < 5 || seen["main.spin"] < 20 {
		t.Fatalf("steps walked: %v, want at least 5 in main.mid and 20 in main.spin", seen)
	}
	t.Logf("steps walked: %v", seen)
}
