package unwind

import (
	"encoding/binary"
	"slices"
	"testing"
)

// A Go program's process, synthetic: Go code (frame pointers, no table) at
// goCode, a leaf with a table (the vDSO's clock_gettime) at leafCode, g0's
// stack at g0Base and the goroutine's below it at gBase.
const (
	goCode   = 0x40_0000
	leafCode = 0x7f00_0000_0000
	codeSize = 0x1000
	g0Base   = 0x7ffc_0000_0000
	gBase    = 0xc000_0000
)

// leafRule: CFA = SP+8, the return address at CFA-8, FP untouched.
var leafRule = Rule{CFA: CFASP, CFAOff: 8, RA: RegSaved, RAOff: -8, FP: RegSame}

type goProcess struct{}

func (goProcess) Rule(pc uint64) (*Rule, bool) {
	switch {
	case pc >= goCode && pc < goCode+codeSize:
		return nil, true
	case pc >= leafCode && pc < leafCode+codeSize:
		return &leafRule, false
	}
	return nil, false
}

// goMem is the process's memory: the goroutine's stack and the Go code,
// each return address into it after a CALL rel32 but the last, goexit's,
// after a NOP as Go starts goroutines.
type goMem struct {
	g     *synth
	code  []byte
	reads int
}

func (m *goMem) ReadMemory(addr uint64, dst []byte) error {
	m.reads++
	n := uint64(len(dst))
	if addr >= goCode && addr-goCode+n <= codeSize {
		copy(dst, m.code[addr-goCode:])
		return nil
	}
	if off := addr - m.g.base; addr >= m.g.base && off+n <= uint64(len(m.g.mem)) {
		copy(dst, m.g.mem[off:])
		return nil
	}
	return errFake
}

// goSwitch lays out a sample in the leaf (first: in the Go function that
// called it, after it switched to g0's stack) and returns what the walk
// must give: the PC, the Go function, then its callers from the
// goroutine's stack.
func goSwitch(first bool) (Regs, *Stack, *goMem, []uint64) {
	g0 := newSynth(g0Base, 512)
	g := newSynth(gBase, 1024)
	code := make([]byte, codeSize)
	retNow := uint64(goCode + 0x105) // in the Go function, after its call of the leaf
	code[retNow-goCode-5] = 0xe8
	// Four Go callers on the goroutine's stack, then goexit+1.
	var rets []uint64
	fp := uint64(gBase + 64)
	regsFP := fp
	for i := range 5 {
		ret := uint64(goCode + 0x200 + 0x100*i)
		next := fp + 48
		if i == 4 {
			code[ret-goCode-1] = 0x90 // goexit's NOP
			next = 0
		} else {
			code[ret-goCode-5] = 0xe8
		}
		g.put(fp, next, ret)
		rets = append(rets, ret)
		fp = next
	}
	regs := Regs{PC: leafCode + 0x10, SP: g0Base + 64, FP: regsFP}
	binary.LittleEndian.PutUint64(g0.mem[64:], retNow)
	want := append([]uint64{regs.PC, retNow}, rets...)
	if first {
		regs = Regs{PC: retNow, SP: g0Base + 72, FP: regsFP}
		want = want[1:]
	}
	st := g0.stack()
	return regs, st, &goMem{g: g, code: code}, want
}

// A frame record of Go code that lies on another stack (the goroutine's,
// Go having switched to g0's to call the vDSO) is followed there: through
// the fallback reader, or through Stack.After, marked as read after the
// sample; without either the walk ends there as before.
func TestWalkCFIGoStackSwitch(t *testing.T) {
	for _, first := range []bool{false, true} {
		regs, st, mem, want := goSwitch(first)
		dst := make([]uint64, 0, 64)
		w := mustWalker(t, Config{Arch: ArchAMD64, TablesOnly: true})
		got, res := w.WalkCFI(regs, st, goProcess{}, dst)
		n := 2
		if first {
			n = 1
		}
		if !slices.Equal(got, want[:n]) || (res.Stop != StopNotIncreasing && res.Stop != StopOutOfStack) || res.StackSwitches != 0 {
			t.Errorf("first %v, no reader: %#x, %v; want %#x, the record not above SP or out of the stack", first, got, res.Stop, want[:n])
		}

		fb := mustWalker(t, Config{Arch: ArchAMD64, TablesOnly: true, Fallback: mem})
		got, res = fb.WalkCFI(regs, st, goProcess{}, dst)
		if !slices.Equal(got, want) || res.Stop != StopEnd || res.StackSwitches != 1 || res.AfterSampleFrames != 0 || res.LeftCopy() || res.Hash != HashPCs(got) {
			t.Errorf("first %v, fallback: %#x, %+v; want %#x, one switch", first, got, res, want)
		}

		st.After = mem
		got, res = w.WalkCFI(regs, st, goProcess{}, dst)
		marked := slices.Concat(want[:n], []uint64{AfterSampleMark}, want[n:])
		if !slices.Equal(got, marked) || res.Stop != StopEnd || res.StackSwitches != 1 || res.AfterSampleFrames != len(want)-n || res.LeftCopy() || res.Hash != HashPCs(got) {
			t.Errorf("first %v, after the sample: %#x, %+v; want %#x, one switch", first, got, res, marked)
		}

		// goexit's NOP passes only where the chain ends.
		binary.LittleEndian.PutUint64(mem.g.mem[64+4*48:], gBase+512)
		got, res = w.WalkCFI(regs, st, goProcess{}, dst)
		if !slices.Equal(got, marked[:len(marked)-1]) || res.Stop != StopNotAfterCall {
			t.Errorf("first %v, NOP-return not outermost: %#x, %v; want %#x, %v", first, got, res.Stop, marked[:len(marked)-1], StopNotAfterCall)
		}
	}
}

// Records that hop from stack to stack (hostile memory) are followed
// through at most maxSwitches switches, each stack's records rising.
func TestWalkCFIGoStackSwitchBounded(t *testing.T) {
	regs, st, mem, _ := goSwitch(false)
	g := mem.g
	// Each record on the goroutine's stack points below itself: a new
	// switch every frame.
	for i := range 8 {
		fp := uint64(gBase + 1024 - 64 - 64*i)
		g.put(fp, fp-64, goCode+0x205)
	}
	regs.FP = gBase + 1024 - 64
	w := mustWalker(t, Config{Arch: ArchAMD64, TablesOnly: true, Fallback: mem})
	got, res := w.WalkCFI(regs, st, goProcess{}, make([]uint64, 0, 64))
	if res.StackSwitches != maxSwitches || res.Stop != StopNotIncreasing || len(got) != 2+maxSwitches {
		t.Errorf("%#x, %+v; want %d frames, %d switches, %v", got, res, 2+maxSwitches, maxSwitches, StopNotIncreasing)
	}
	// A record at the top of the address space.
	regs.FP = ^uint64(0) - 7
	if _, res := w.WalkCFI(regs, st, goProcess{}, make([]uint64, 0, 64)); res.Stop == StopEnd || res.StackSwitches != 0 {
		t.Errorf("record at %#x: %+v", regs.FP, res)
	}
}

// The walk across a switch makes no allocation.
func TestWalkCFIGoStackSwitchNoAllocs(t *testing.T) {
	regs, st, mem, want := goSwitch(false)
	dst := make([]uint64, 0, 64)
	fb := mustWalker(t, Config{Arch: ArchAMD64, TablesOnly: true, Fallback: mem})
	w := mustWalker(t, Config{Arch: ArchAMD64, TablesOnly: true})
	after := *st
	after.After = mem
	for _, c := range []struct {
		w  *Walker
		st *Stack
	}{{fb, st}, {w, &after}} {
		if got, res := c.w.WalkCFI(regs, c.st, goProcess{}, dst); len(got) < len(want) || res.StackSwitches != 1 {
			t.Fatalf("%#x, %+v", got, res)
		}
		if a := testing.AllocsPerRun(100, func() { c.w.WalkCFI(regs, c.st, goProcess{}, dst) }); a != 0 {
			t.Errorf("%v allocations per walk", a)
		}
	}
}
