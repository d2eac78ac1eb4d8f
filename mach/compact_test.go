package mach

import (
	"debug/macho"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/unwind"
	"github.com/macprof/macprof/unwind/compact"
)

// TestCompactTablesFromTaskMemory loads the compact unwind fixture into a
// fake task's memory with a slide, as dyld would, and checks the path the
// darwin Target takes: a walk asks for the image's table, the table is
// read from the task's memory between captures, the next walk uses it,
// and another target of the same image finds it in the cache.
func TestCompactTablesFromTaskMemory(t *testing.T) {
	const slide = 0x2_3400_0000
	path := filepath.Join("..", "unwind", "compact", "testdata", "prog_arm64")
	var mem fixture.Memory
	m := mem.MapMachO(t, path, slide)
	load := m.Text().Addr + slide
	img, err := images.MachOImageFromMemory(&mem, load, path)
	if err != nil {
		t.Fatal(err)
	}
	set := images.NewSet([]*images.Image{img})
	f, err := macho.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sym := map[string]uint64{}
	for _, s := range f.Symtab.Syms {
		sym[s.Name] = s.Value + slide
	}

	// A sample in the frameless leaf, called from caller, whose frame
	// record at FP ends the chain.
	const sp = 0x7000_0000
	stack := make([]byte, 64)
	binary.LittleEndian.PutUint64(stack[16:], 0) // caller's record: FP, return address
	binary.LittleEndian.PutUint64(stack[24:], 0)
	st := &unwind.Stack{Base: sp, Data: stack, Lo: sp, Hi: sp + 64}
	callerRet := sym["_caller"] + 0xc
	regs := unwind.Regs{PC: sym["_leaf_asm"] + 4, SP: sp, FP: sp + 16, LR: callerRet}

	cache := compact.NewCache(1 << 20)
	imgs, err := CompactImages(set, cache, unwind.ArchARM64)
	if err != nil {
		t.Fatal(err)
	}
	w, err := unwind.NewWalker(unwind.Config{Arch: unwind.ArchARM64})
	if err != nil {
		t.Fatal(err)
	}
	if _, res := w.WalkCFI(regs, st, imgs, make([]uint64, 0, 8)); res.CFIFrames != 0 || imgs.Built() != 0 {
		t.Fatalf("first walk %+v with %d tables, want frame records while the image's table is asked for", res, imgs.Built())
	}
	if n, err := BuildCompactTables(imgs, cache, &mem); n != 1 || err != nil {
		t.Fatalf("BuildCompactTables = %d, %v", n, err)
	}
	pcs, res := w.WalkCFI(regs, st, imgs, make([]uint64, 0, 8))
	if res.Stop != unwind.StopEnd || len(pcs) != 2 || pcs[1] != callerRet || res.CFIFrames != 2 {
		t.Errorf("walk with the table: %#x %+v", pcs, res)
	}
	// Another process of the same image starts with the table.
	imgs2, err := CompactImages(set, cache, unwind.ArchARM64)
	if err != nil {
		t.Fatal(err)
	}
	if _, res := w.WalkCFI(regs, st, imgs2, make([]uint64, 0, 8)); res.Stop != unwind.StopEnd || res.CFIFrames != 2 {
		t.Errorf("walk in a second target: %+v, want the cached table used", res)
	}
	if n, err := BuildCompactTables(imgs2, cache, &mem); n != 0 || err != nil {
		t.Errorf("second target built %d tables (%v)", n, err)
	}
}
