package unwind

import (
	"encoding/binary"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// afterMem is a thread's memory as it is after its sample: its stack (s,
// which may differ from the copy) and the synthetic object's code at
// objBase (code, or the bytes of pattern over and over). It fails the
// test on a stack read outside [lo, hi), where the walk may read after the
// sample: above the copy, within AfterSampleSpan.
type afterMem struct {
	t       testing.TB
	s       *synth
	code    []byte
	pattern []byte
	lo, hi  uint64
	reads   int
}

func (m *afterMem) ReadMemory(addr uint64, dst []byte) error {
	m.reads++
	n := uint64(len(dst))
	if m.pattern != nil && addr >= objBase && addr-objBase+n <= objSize {
		for i := range dst {
			dst[i] = m.pattern[(addr-objBase+uint64(i))%uint64(len(m.pattern))]
		}
		return nil
	}
	if addr >= objBase && addr-objBase+n <= uint64(len(m.code)) {
		copy(dst, m.code[addr-objBase:])
		return nil
	}
	if addr < m.lo || addr > m.hi || m.hi-addr < n {
		m.t.Fatalf("read after the sample [%#x, +%d) outside [%#x, %#x)", addr, n, m.lo, m.hi)
	}
	if off := addr - m.s.base; off+n <= uint64(len(m.s.mem)) {
		copy(dst, m.s.mem[off:])
		return nil
	}
	return errFake
}

// callCode returns the synthetic object's code with a CALL rel32 ending
// at each of rets.
func callCode(rets ...uint64) []byte {
	code := make([]byte, objSize)
	for _, r := range rets {
		code[r-objBase-5] = 0xe8
	}
	return code
}

// afterStack returns s's stack with a copy of its first cut bytes, the
// rest readable after the sample through m.
func afterStack(t testing.TB, s *synth, cut int, code []byte) (*Stack, *afterMem) {
	m := &afterMem{t: t, s: s, code: code, lo: s.base + uint64(cut), hi: s.base + uint64(len(s.mem))}
	st := &Stack{Base: s.base, Data: s.mem[:cut], Lo: s.base, Hi: s.base + uint64(len(s.mem)), After: m}
	return st, m
}

var (
	retRecurse = uint64(objBase + fnRecurse + 0x10)
	retMid     = uint64(objBase + fnMid + 0x10)
	retStart   = uint64(objBase + fnStart + 0x10)
	retFramed  = uint64(objBase + fnFramed + 0x10)
)

// A walk that leaves the copy reads the rest of the stack after the
// sample: the whole stack, the frames past the copy after the mark.
func TestWalkCFIAfterSample(t *testing.T) {
	tables := oneObject{testTable(ArchAMD64)}
	w := mustWalker(t, Config{Arch: ArchAMD64})
	for _, alt := range []bool{false, true} {
		s, regs := calls(12, alt)
		whole, res := w.WalkCFI(regs, s.stack(), tables, make([]uint64, 0, 64))
		if res.Stop != StopEnd || len(whole) != 13 {
			t.Fatalf("alternating %v: the whole copy walks to %d frames, %v", alt, len(whole), res.Stop)
		}
		cut := 200
		// Without a reader, the walk ends at the copy's end.
		st, _ := afterStack(t, s, cut, callCode(retRecurse, retMid, retStart))
		st.After = nil
		got, res := w.WalkCFI(regs, st, tables, make([]uint64, 0, 64))
		k := len(got)
		if res.Stop != StopReadFailed || k >= len(whole) || !slices.Equal(got, whole[:k]) {
			t.Fatalf("alternating %v, no reader: %#x, %v; want a prefix of %#x, %v", alt, got, res.Stop, whole, StopReadFailed)
		}
		st, m := afterStack(t, s, cut, callCode(retRecurse, retMid, retStart))
		got, res = w.WalkCFI(regs, st, tables, make([]uint64, 0, 64))
		want := slices.Concat(whole[:k], []uint64{AfterSampleMark}, whole[k:])
		if res.Stop != StopEnd || !slices.Equal(got, want) {
			t.Fatalf("alternating %v: %#x, %v; want %#x, end of chain", alt, got, res.Stop, want)
		}
		if res.AfterSampleFrames != len(whole)-k || res.Hash != HashPCs(got) || m.reads == 0 {
			t.Errorf("alternating %v: %d frames after the sample (want %d), hash %#x (want %#x), %d reads", alt, res.AfterSampleFrames, len(whole)-k, res.Hash, HashPCs(got), m.reads)
		}
	}
}

// Memory read after the sample that is not a caller's frame ends the walk
// where the copy ended, or at the first frame that fails: a return
// address not after a call, in no known code, a CFA that does not rise,
// or no room for the mark.
func TestWalkCFIAfterSampleForged(t *testing.T) {
	tables := oneObject{testTable(ArchAMD64)}
	w := mustWalker(t, Config{Arch: ArchAMD64})
	const n, cut = 12, 200
	s, regs := calls(n, false)
	whole, _ := w.WalkCFI(regs, s.stack(), tables, make([]uint64, 0, 64))
	k := 7 // the frames the copy holds (cut/32 + the PC)
	t.Run("not after a call", func(t *testing.T) {
		// The code before fnRecurse+0x10 holds no call, fnStart's does.
		st, _ := afterStack(t, s, cut, callCode(retStart))
		got, res := w.WalkCFI(regs, st, tables, make([]uint64, 0, 64))
		if res.Stop != StopNotAfterCall || !slices.Equal(got, whole[:k]) || res.AfterSampleFrames != 0 {
			t.Fatalf("%#x, %v, %d after; want %#x, %v", got, res.Stop, res.AfterSampleFrames, whole[:k], StopNotAfterCall)
		}
	})
	t.Run("a jump, not a call", func(t *testing.T) {
		code := callCode(retStart)
		copy(code[retRecurse-objBase-2:], []byte{0xff, 0xe0}) // jmp *%rax
		st, _ := afterStack(t, s, cut, code)
		got, res := w.WalkCFI(regs, st, tables, make([]uint64, 0, 64))
		if res.Stop != StopNotAfterCall || !slices.Equal(got, whole[:k]) {
			t.Fatalf("%#x, %v; want %#x, %v", got, res.Stop, whole[:k], StopNotAfterCall)
		}
	})
	t.Run("no known code", func(t *testing.T) {
		f := newSynth(testBase, len(s.mem))
		copy(f.mem, s.mem)
		f.word(testBase+6*32+24, jitBase+0x10) // the first return address past the copy
		st, _ := afterStack(t, f, cut, callCode(retRecurse, retStart))
		got, res := w.WalkCFI(regs, st, tables, make([]uint64, 0, 64))
		if res.Stop != StopNotAfterCall || !slices.Equal(got, whole[:k]) {
			t.Fatalf("%#x, %v; want %#x, %v", got, res.Stop, whole[:k], StopNotAfterCall)
		}
	})
	t.Run("CFA not rising", func(t *testing.T) {
		// fnRecurse frames, the last returning, past the copy, to
		// fnFramed (CFA=FP+16), whose record at FP (past the copy too)
		// holds a good return address and a saved FP far below.
		f := newSynth(testBase, 512)
		sp := f.base
		for i := 0; i < 7; i++ {
			ret := retRecurse
			if i == 6 {
				ret = retFramed
			}
			f.word(sp+24, ret)
			sp += 32
		}
		// fnFramed's frame: record at fp, caller's CFA fp+16.
		fp := sp + 64
		f.put(fp, testBase+8, retFramed) // the caller's FP: far below
		regs := Regs{PC: objBase + fnRecurse + 4, SP: f.base, FP: fp}
		st, _ := afterStack(t, f, cut, callCode(retRecurse, retFramed))
		got, res := w.WalkCFI(regs, st, tables, make([]uint64, 0, 64))
		want := slices.Concat(whole[:k], []uint64{AfterSampleMark, retFramed, retFramed})
		if res.Stop != StopNotIncreasing || !slices.Equal(got, want) || res.AfterSampleFrames != 2 {
			t.Fatalf("%#x, %v, %d after; want %#x, %v, 2 after", got, res.Stop, res.AfterSampleFrames, want, StopNotIncreasing)
		}
	})
	t.Run("no room for the mark", func(t *testing.T) {
		st, _ := afterStack(t, s, cut, callCode(retRecurse, retStart))
		got, res := w.WalkCFI(regs, st, tables, make([]uint64, 0, k+1))
		if res.Stop != StopNoRoom || !slices.Equal(got, whole[:k]) {
			t.Fatalf("%#x, %v; want %#x, %v", got, res.Stop, whole[:k], StopNoRoom)
		}
	})
	t.Run("beyond the span", func(t *testing.T) {
		// fnAligned: CFA=[SP+16]+8, its return address at CFA-8: the
		// last word of the span, then the first past it.
		regs := Regs{PC: objBase + fnAligned + 4, SP: testBase}
		for _, slot := range []uint64{testBase + 64 + AfterSampleSpan - 8, testBase + 64 + AfterSampleSpan} {
			big := newSynth(testBase, 2*AfterSampleSpan+4096)
			big.word(testBase+16, slot)
			big.word(slot, retStart)
			st, m := afterStack(t, big, 64, callCode(retStart))
			got, res := w.WalkCFI(regs, st, tables, make([]uint64, 0, 64))
			if slot-st.Base-64 < AfterSampleSpan {
				if want := []uint64{regs.PC, AfterSampleMark, retStart}; res.Stop != StopEnd || !slices.Equal(got, want) {
					t.Errorf("return address %#x past the copy: %#x, %v; want %#x, end of chain", slot-st.Base-64, got, res.Stop, want)
				}
				continue
			}
			if res.Stop != StopReadFailed || len(got) != 1 || m.reads != 0 {
				t.Errorf("return address %#x past the copy: %#x, %v, %d reads; want the PC alone, %v, no read", slot-st.Base-64, got, res.Stop, m.reads, StopReadFailed)
			}
		}
	})
}

// The walk past the copy makes no allocation.
func TestWalkCFIAfterSampleNoAllocs(t *testing.T) {
	w := mustWalker(t, Config{Arch: ArchAMD64})
	var tables Tables = oneObject{testTable(ArchAMD64)}
	s, regs := calls(64, true)
	st, _ := afterStack(t, s, 512, callCode(retRecurse, retMid, retStart))
	dst := make([]uint64, 0, 128)
	got, res := w.WalkCFI(regs, st, tables, dst)
	if len(got) != 66 || res.Stop != StopEnd || res.AfterSampleFrames == 0 {
		t.Fatalf("%d frames, %v, %d after the sample; want 66, end of chain", len(got), res.Stop, res.AfterSampleFrames)
	}
	if a := testing.AllocsPerRun(100, func() { w.WalkCFI(regs, st, tables, dst) }); a != 0 {
		t.Errorf("%v allocations per walk", a)
	}
}

// FollowsCall agrees with llvm-mc's encodings: every call form (amd64
// CALL rel32 and CALL r/m64 with each ModRM, SIB and displacement size,
// prefixed or not; arm64 BL, BLR and the authenticating BLRs) ends a call,
// and jumps, returns and ordinary instructions do not.
func TestFollowsCallEncodings(t *testing.T) {
	mc, err := exec.LookPath("llvm-mc")
	if err != nil {
		t.Fatalf("llvm-mc (LLVM's assembler, Debian package llvm) is needed to encode the instructions: %v", err)
	}
	for _, c := range []struct {
		arch     Arch
		triple   string
		calls    []string
		notCalls []string
	}{
		{ArchAMD64, "x86_64", []string{
			"callq *%rax", "callq *%r11", "callq *16(%rip)", "callq *8(%rax)", "callq *8(%rsp)",
			"callq *4096(%rsp)", "callq *4096(%rax)", "callq *(%rax)", "callq *(%rsp)", "callq *6295552",
			"callq *(%rax,%rbx,8)", "callq *16(%r12,%rbx,8)", "callq *(%r13)", "callq 4660", "notrack callq *%rax",
		}, []string{
			"jmpq *%rax", "jmpq *8(%rax)", "retq", "pushq %rbp", "movq 8(%rax), %rax", "jmp 4660", "nop", "int3",
		}},
		{ArchARM64, "aarch64", []string{
			"bl #256", "bl #-4", "blr x8", "blr x30", "blraaz x8", "blrabz x3", "blraa x8, x9", "blrab x1, sp",
		}, []string{
			"b #256", "br x8", "ret", "braaz x8", "braa x8, x9", "nop", "add x0, x1, x2", "b.eq #8",
		}},
	} {
		codes := encode(t, mc, c.triple, slices.Concat(c.calls, c.notCalls))
		for i, list := range [][]string{c.calls, c.notCalls} {
			for _, insn := range list {
				code := codes[0]
				codes = codes[1:]
				// Filler no call can end in: the instruction last.
				before := make([]byte, 8-len(code), 8)
				for j := range before {
					before[j] = 0x90 // nop
				}
				if c.arch == ArchARM64 {
					before = []byte{0x1f, 0x20, 0x03, 0xd5} // nop
				}
				word := binary.LittleEndian.Uint64(append(before, code...))
				if got := FollowsCall(c.arch, word); got != (i == 0) {
					t.Errorf("%v %q (% x): FollowsCall = %v", c.arch, insn, code, got)
				}
			}
		}
	}
}

var encodingRE = regexp.MustCompile(`encoding: \[([^\]]*)\]`)

// encode returns the bytes llvm-mc assembles each of insns to, a fixup's
// bytes zero.
func encode(t *testing.T, mc, triple string, insns []string) [][]byte {
	t.Helper()
	cmd := exec.Command(mc, "-triple="+triple, "-show-encoding")
	if triple == "aarch64" {
		cmd.Args = append(cmd.Args, "-mattr=+pauth")
	}
	cmd.Stdin = strings.NewReader(strings.Join(insns, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-mc: %v\n%s", err, out)
	}
	ms := encodingRE.FindAllSubmatch(out, -1)
	if len(ms) != len(insns) {
		t.Fatalf("llvm-mc: %d encodings for %d instructions in\n%s", len(ms), len(insns), out)
	}
	codes := make([][]byte, len(ms))
	for i, m := range ms {
		for _, b := range strings.Split(string(m[1]), ",") {
			v, err := strconv.ParseUint(strings.TrimPrefix(b, "0x"), 16, 8)
			if err != nil {
				v = 0 // a fixup's byte
			}
			codes[i] = append(codes[i], byte(v))
		}
	}
	return codes
}

// FuzzWalkCFIAfterSample: a copy and memory after the sample, both
// arbitrary (the stack bytes data, changed by xor after the copy; code
// repeating code), walked with the synthetic object's table never panic,
// loop or read outside the stack past the copy (afterMem fails the test),
// and every frame after the one AfterSampleMark returns after a call in
// known code.
func FuzzWalkCFIAfterSample(f *testing.F) {
	s, regs := calls(24, true)
	call := []byte{0xe8, 0, 0, 0, 0}
	f.Add(s.mem, uint16(200), []byte{}, call, regs.PC, uint64(0), uint64(0), false, uint16(64))
	f.Add(s.mem, uint16(333), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0x10}, []byte{0xff, 0x15, 0, 0, 0, 0, 0xff, 0xd0}, regs.PC, uint64(0), uint64(0), false, uint16(20))
	f.Add(s.mem, uint16(0), []byte{}, call, regs.PC, uint64(0), uint64(0), false, uint16(64))
	f.Add(s.mem, uint16(100), []byte{}, []byte{0x94, 0, 0, 0x40}, regs.PC, uint64(0), uint64(0), true, uint16(64))
	fr := newSynth(testBase, 512)
	fr.put(testBase+64, testBase+8, retFramed) // a saved FP far below
	f.Add(fr.mem, uint16(32), []byte{}, call, uint64(objBase+fnFramed+0x10), uint64(0), uint64(testBase+64), false, uint16(64))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16, xor, code []byte, pc, spOff, fp uint64, arm bool, capacity uint16) {
		arch := ArchAMD64
		if arm {
			arch = ArchARM64
		}
		if len(data) > 1<<16 {
			data = data[:1<<16]
		}
		n := min(int(cut), len(data))
		after := newSynth(testBase, len(data))
		copy(after.mem, data)
		for i, b := range xor {
			if n+i < len(after.mem) {
				after.mem[n+i] ^= b
			}
		}
		if len(code) == 0 {
			code = []byte{0}
		}
		m := &afterMem{t: t, s: after, pattern: code, lo: testBase + uint64(n), hi: testBase + uint64(len(data))}
		st := &Stack{Base: testBase, Data: data[:n], Lo: testBase, Hi: testBase + uint64(len(data)), After: m}
		w := mustWalker(t, Config{Arch: arch})
		tables := oneObject{testTable(arch)}
		dst := make([]uint64, 0, int(capacity))
		sp := testBase + spOff%uint64(len(data)+1)
		got, res := w.WalkCFI(Regs{PC: pc, SP: sp, FP: fp, LR: pc}, st, tables, dst)
		if len(got) > int(capacity) || len(got) > DefaultMaxFrames {
			t.Fatalf("%d frames with capacity %d", len(got), capacity)
		}
		if res.Hash != 0 && res.Hash != HashPCs(got) {
			t.Fatalf("hash %#x, HashPCs %#x", res.Hash, HashPCs(got))
		}
		mark := slices.Index(got, AfterSampleMark)
		if mark < 0 {
			if res.AfterSampleFrames != 0 {
				t.Fatalf("%d frames after the sample, no mark in %#x", res.AfterSampleFrames, got)
			}
			return
		}
		if mark == 0 || res.AfterSampleFrames != len(got)-mark-1 || slices.Contains(got[mark+1:], AfterSampleMark) {
			t.Fatalf("mark at %d of %#x, %d frames after the sample", mark, got, res.AfterSampleFrames)
		}
		for _, ret := range got[mark+1:] {
			var b [8]byte
			if r, fpObj := tables.Rule(ret - 1); r == nil && !fpObj || m.ReadMemory(ret-8, b[:]) != nil || !FollowsCall(arch, binary.LittleEndian.Uint64(b[:])) {
				t.Fatalf("%#x, read after the sample, does not return after a call in known code (%#x)", ret, got)
			}
		}
		if m.reads > 8*len(got)+scanWords*scanTries {
			t.Fatalf("%d reads after the sample for %d frames", m.reads, len(got))
		}
	})
}
