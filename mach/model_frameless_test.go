package mach_test

import (
	"debug/macho"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// The darwin Target walking a sample taken inside the hand-written
// frameless leaf of the compact unwind fixture (unwind/compact/testdata,
// built by its build.sh with clang -target {arm64,x86_64}-apple-macos11
// and ld64.lld-14), with the stack laid out as the fixture's own
// instructions lay it out. Every instruction the layouts below follow is
// checked against the fixture's bytes (the encodings llvm-objdump-14 -d
// prints), and every return address is taken from a call instruction of
// the fixture that is checked to call the expected function. The compact
// encodings the walk must use, as llvm-objdump-14 --unwind-info prints
// them for the fixture:
//
//	x86_64: leaf_asm 0x02010000 (UNWIND_X86_64_MODE_STACK_IMMD, 8 bytes:
//	        the return address at RSP), nofp_caller 0x02040802
//	        (STACK_IMMD, 32 bytes, rbx and r14 saved), caller 0x01000000,
//	        saver 0x010558d1, main 0x01020021 (UNWIND_X86_64_MODE_RBP_FRAME)
//	arm64:  leaf_asm 0x02000000 (UNWIND_ARM64_MODE_FRAMELESS, return
//	        address in LR), caller 0x04000000, saver 0x0400000f, main
//	        0x04000001 (UNWIND_ARM64_MODE_FRAME)

// compactFixture is the compact unwind fixture program for arch.
func compactFixture(arch string) string {
	return filepath.Join("..", "unwind", "compact", "testdata", "prog_"+arch)
}

// fixtureCode is a fixture's __TEXT,__text and function symbols
// (link-time addresses), to check transcribed instructions against.
type fixtureCode struct {
	t     *testing.T
	arch  string
	syms  map[string]uint64
	text  []byte
	addr  uint64
	slide uint64
}

func loadFixtureCode(t *testing.T, arch string, slide uint64) *fixtureCode {
	t.Helper()
	return loadCode(t, arch, compactFixture(arch), slide)
}

// loadCode is loadFixtureCode of the fixture at path.
func loadCode(t *testing.T, arch, path string, slide uint64) *fixtureCode {
	t.Helper()
	f, err := macho.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section("__text")
	if sec == nil {
		t.Fatalf("%s: no __text", path)
	}
	text, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	return &fixtureCode{t: t, arch: arch, syms: fixture.MachOFunctions(t, path), text: text, addr: sec.Addr, slide: slide}
}

// sym is the slid address of fn+off.
func (f *fixtureCode) sym(fn string, off uint64) uint64 {
	f.t.Helper()
	a, ok := f.syms[fn]
	if !ok {
		f.t.Fatalf("prog_%s has no symbol %s", f.arch, fn)
	}
	return a + off + f.slide
}

// bytes returns n bytes of the fixture's code at fn+off.
func (f *fixtureCode) bytes(fn string, off uint64, n int) []byte {
	f.t.Helper()
	a := f.sym(fn, off) - f.slide
	if a < f.addr || a-f.addr+uint64(n) > uint64(len(f.text)) {
		f.t.Fatalf("%s+%#x: outside __text", fn, off)
	}
	return f.text[a-f.addr : a-f.addr+uint64(n)]
}

// code checks that the fixture's code at fn+off is the given bytes, as
// llvm-objdump-14 -d prints their encodings: the instructions a layout
// transcribes are the fixture's.
func (f *fixtureCode) code(fn string, off uint64, encodings string) {
	f.t.Helper()
	want, err := hex.DecodeString(strings.ReplaceAll(encodings, " ", ""))
	if err != nil {
		f.t.Fatal(err)
	}
	if got := f.bytes(fn, off, len(want)); !slices.Equal(got, want) {
		f.t.Fatalf("prog_%s %s+%#x is % x, want % x: the fixture was rebuilt; redo the layout from its disassembly", f.arch, fn, off, got, want)
	}
}

// callReturn checks that fn+off is a call of callee and returns the
// return address it pushes (x86_64) or puts in LR (arm64): the address of
// the call plus its length. x86_64 "call rel32" is e8 and a 32-bit
// displacement from the next instruction (5 bytes); arm64 "bl" is
// 0b100101 and a 26-bit word offset from the instruction (4 bytes).
func (f *fixtureCode) callReturn(fn string, off uint64, callee string) uint64 {
	f.t.Helper()
	at := f.sym(fn, off)
	var target, next uint64
	switch f.arch {
	case "x86_64":
		b := f.bytes(fn, off, 5)
		if b[0] != 0xe8 {
			f.t.Fatalf("%s+%#x is not a call rel32: % x", fn, off, b)
		}
		next = at + 5
		target = next + uint64(int64(int32(binary.LittleEndian.Uint32(b[1:]))))
	case "arm64":
		w := binary.LittleEndian.Uint32(f.bytes(fn, off, 4))
		if w>>26 != 0b100101 {
			f.t.Fatalf("%s+%#x is not a bl: %#08x", fn, off, w)
		}
		next = at + 4
		target = at + uint64(int64(int32(w<<6))>>4) // imm26 * 4, sign-extended
	}
	if want := f.sym(callee, 0); target != want {
		f.t.Fatalf("%s+%#x calls %#x, want %s at %#x", fn, off, target, callee, want)
	}
	return next
}

// Values the layouts store for registers whose contents the fixture's
// caller chain does not decide (callee-saved registers as the thread's
// earlier code left them): arbitrary, and distinct from every address
// in the stack region and the image.
const junk = 0x5a5a_0000_0000_0000

// x86Frames is an x86_64 thread's RSP, RBP and the words its code
// stored on the stack.
type x86Frames struct {
	f        *fixtureCode
	rsp, rbp uint64
	words    map[uint64]uint64
}

func (m *x86Frames) push(v uint64) {
	m.rsp -= 8
	m.words[m.rsp] = v
}

// call is "call callee" at fn+off: the return address pushed at RSP,
// which the System V ABI (followed by macOS on x86_64) keeps 16-byte
// aligned at a call.
func (m *x86Frames) call(fn string, off uint64, callee string) {
	m.f.t.Helper()
	if m.rsp%16 != 0 {
		m.f.t.Fatalf("%s+%#x: call with RSP %#x not 16-byte aligned: the transcription is wrong", fn, off, m.rsp)
	}
	m.push(m.f.callReturn(fn, off, callee))
}

// x86Main runs main (0x100000560 in the fixture) from its entry, RSP at
// entry (which holds main's return address: 0, main being the outermost
// frame of this -nostdlib program, as the model's other stacks end) to
// its call of callee: saver or nofp_caller.
func x86Main(f *fixtureCode, entry uint64, callee string) *x86Frames {
	m := &x86Frames{f: f, rsp: entry, words: map[uint64]uint64{entry: 0}}
	// 100000560: 55                 pushq %rbp
	// 100000561: 48 89 e5           movq  %rsp, %rbp
	// 100000564: 41 56              pushq %r14
	// 100000566: 53                 pushq %rbx
	// 100000567: bf 03 00 00 00     movl  $3, %edi
	// 10000056c: e8 3f ff ff ff     callq _caller (returned: RSP as before)
	// 100000571: 49 89 c6           movq  %rax, %r14
	// 100000574: be 02 00 00 00     movl  $2, %esi
	// 100000579: ba 03 00 00 00     movl  $3, %edx
	// 10000057e: b9 04 00 00 00     movl  $4, %ecx
	// 100000583: 41 b8 05 00 00 00  movl  $5, %r8d
	// 100000589: 48 89 c7           movq  %rax, %rdi
	// 10000058c: e8 2f ff ff ff     callq _saver
	// 100000591: 48 89 c3           movq  %rax, %rbx
	// 100000594: 4c 01 f3           addq  %r14, %rbx
	// 100000597: 48 89 df           movq  %rbx, %rdi
	// 10000059a: e8 31 00 00 00     callq _nofp_caller
	f.code("main", 0, "55 48 89 e5 41 56 53 bf 03 00 00 00 e8 3f ff ff ff 49 89 c6 be 02 00 00 00 ba 03 00 00 00 b9 04 00 00 00 41 b8 05 00 00 00 48 89 c7 e8 2f ff ff ff")
	m.push(0) // the outermost frame's RBP: the chain ends
	m.rbp = m.rsp
	m.push(junk | 14) // r14
	m.push(junk | 3)  // rbx
	switch callee {
	case "saver":
		m.call("main", 0x2c, "saver")
	case "nofp_caller":
		f.code("main", 0x31, "48 89 c3 4c 01 f3 48 89 df e8 31 00 00 00")
		m.call("main", 0x3a, "nofp_caller")
	default:
		f.t.Fatalf("main does not call %s", callee)
	}
	return m
}

// saver runs saver (0x1000004c0) from its entry to its first call of
// caller; main passed rdx = 3 and r8 = 5, which it stores in its frame.
func (m *x86Frames) saver() {
	// 1000004c0: 55                 pushq %rbp
	// 1000004c1: 48 89 e5           movq  %rsp, %rbp
	// 1000004c4: 41 57              pushq %r15
	// 1000004c6: 41 56              pushq %r14
	// 1000004c8: 41 55              pushq %r13
	// 1000004ca: 41 54              pushq %r12
	// 1000004cc: 53                 pushq %rbx
	// 1000004cd: 48 83 ec 18        subq  $24, %rsp
	// 1000004d1: 4c 89 45 c0        movq  %r8, -64(%rbp)
	// 1000004d5: 49 89 cd           movq  %rcx, %r13
	// 1000004d8: 49 89 d7           movq  %rdx, %r15
	// 1000004db: 48 89 55 d0        movq  %rdx, -48(%rbp)
	// 1000004df: 48 89 f3           movq  %rsi, %rbx
	// 1000004e2: 49 89 fe           movq  %rdi, %r14
	// 1000004e5: e8 c6 ff ff ff     callq _caller
	m.f.code("saver", 0, "55 48 89 e5 41 57 41 56 41 55 41 54 53 48 83 ec 18 4c 89 45 c0 49 89 cd 49 89 d7 48 89 55 d0 48 89 f3 49 89 fe e8 c6 ff ff ff")
	m.push(m.rbp)
	m.rbp = m.rsp
	m.push(junk | 15) // r15
	m.push(junk | 14) // r14: main's
	m.push(junk | 13) // r13
	m.push(junk | 12) // r12
	m.push(junk | 3)  // rbx: main's
	m.rsp -= 24
	m.words[m.rbp-64] = 5 // r8
	m.words[m.rbp-48] = 3 // rdx
	m.call("saver", 0x25, "caller")
}

// caller runs caller (0x1000004b0) to its call of leaf_asm.
func (m *x86Frames) caller() {
	// 1000004b0: 55                 pushq %rbp
	// 1000004b1: 48 89 e5           movq  %rsp, %rbp
	// 1000004b4: e8 27 03 00 00     callq _leaf_asm
	m.f.code("caller", 0, "55 48 89 e5 e8 27 03 00 00")
	m.push(m.rbp)
	m.rbp = m.rsp
	m.call("caller", 4, "leaf_asm")
}

// nofpCaller runs nofp_caller (0x1000005d0), which keeps no frame record
// and leaves RBP alone, to its first call of leaf_asm.
func (m *x86Frames) nofpCaller() {
	// 1000005d0: 41 56              pushq %r14
	// 1000005d2: 53                 pushq %rbx
	// 1000005d3: 50                 pushq %rax
	// 1000005d4: 49 89 fe           movq  %rdi, %r14
	// 1000005d7: e8 04 02 00 00     callq _leaf_asm
	m.f.code("nofp_caller", 0, "41 56 53 50 49 89 fe e8 04 02 00 00")
	m.push(junk | 14) // r14: main's
	m.push(junk | 3)  // rbx: main's
	m.push(junk | 1)  // rax: saver's result
	m.call("nofp_caller", 7, "leaf_asm")
}

// leaf is the thread interrupted at leaf_asm+off (0x1000007e0), which
// never touches RSP or RBP: its return address stays at RSP and RBP is
// still its caller's.
func (m *x86Frames) leaf(off uint64) *machtest.Layout {
	// 1000007e0: 48 8d 47 01        leaq  1(%rdi), %rax
	// 1000007e4: 48 6b c0 09        imulq $9, %rax, %rax
	// 1000007e8: 48 83 c0 07        addq  $7, %rax
	// 1000007ec: c3                 retq
	m.f.code("leaf_asm", 0, "48 8d 47 01 48 6b c0 09 48 83 c0 07 c3")
	return &machtest.Layout{Regs: unwind.Regs{PC: m.f.sym("leaf_asm", off), SP: m.rsp, FP: m.rbp}, Words: m.words}
}

// arm64Frames is an arm64 thread's SP, FP (x29), LR (x30) and the words
// its code stored on the stack.
type arm64Frames struct {
	f          *fixtureCode
	sp, fp, lr uint64
	words      map[uint64]uint64
}

// stp is "stp a, b, [sp, #off]" (pre: "[sp, #off]!", SP moved first).
func (m *arm64Frames) stp(a, b uint64, off int64, pre bool) {
	at := m.sp + uint64(off)
	if pre {
		m.sp = at
	}
	m.words[at], m.words[at+8] = a, b
}

// bl is "bl callee" at fn+off: the return address in LR; AAPCS64 keeps
// SP 16-byte aligned.
func (m *arm64Frames) bl(fn string, off uint64, callee string) {
	m.f.t.Helper()
	if m.sp%16 != 0 {
		m.f.t.Fatalf("%s+%#x: SP %#x not 16-byte aligned: the transcription is wrong", fn, off, m.sp)
	}
	m.lr = m.f.callReturn(fn, off, callee)
}

// arm64Chain runs main (0x100000568) from its entry, SP at entry, FP and
// LR zero (the outermost frame: the chain ends, as the model's other
// stacks end), through saver and caller, to the sample at leaf_asm+off.
func arm64Chain(f *fixtureCode, entry, off uint64) *machtest.Layout {
	m := &arm64Frames{f: f, sp: entry, words: map[uint64]uint64{}}
	// 100000568: f4 4f be a9  stp x20, x19, [sp, #-32]!
	// 10000056c: fd 7b 01 a9  stp x29, x30, [sp, #16]
	// 100000570: fd 43 00 91  add x29, sp, #16
	// 100000574: 60 00 80 52  mov w0, #3
	// 100000578: d2 ff ff 97  bl  _caller (returned)
	// 10000057c: f3 03 00 aa  mov x19, x0
	// 100000580: 41 00 80 52  mov w1, #2
	// 100000584: 62 00 80 52  mov w2, #3
	// 100000588: 83 00 80 52  mov w3, #4
	// 10000058c: a4 00 80 52  mov w4, #5
	// 100000590: d2 ff ff 97  bl  _saver
	f.code("main", 0, "f4 4f be a9 fd 7b 01 a9 fd 43 00 91 60 00 80 52 d2 ff ff 97 f3 03 00 aa 41 00 80 52 62 00 80 52 83 00 80 52 a4 00 80 52 d2 ff ff 97")
	m.stp(junk|20, junk|19, -32, true)
	m.stp(m.fp, m.lr, 16, false)
	m.fp = m.sp + 16
	m.bl("main", 0x28, "saver")
	// 1000004d8: fa 67 bb a9  stp x26, x25, [sp, #-80]!
	// 1000004dc: f8 5f 01 a9  stp x24, x23, [sp, #16]
	// 1000004e0: f6 57 02 a9  stp x22, x21, [sp, #32]
	// 1000004e4: f4 4f 03 a9  stp x20, x19, [sp, #48]
	// 1000004e8: fd 7b 04 a9  stp x29, x30, [sp, #64]
	// 1000004ec: fd 03 01 91  add x29, sp, #64
	// 1000004f0: f3 03 04 aa  mov x19, x4
	// 1000004f4: f4 03 03 aa  mov x20, x3
	// 1000004f8: f5 03 02 aa  mov x21, x2
	// 1000004fc: f6 03 01 aa  mov x22, x1
	// 100000500: f7 03 00 aa  mov x23, x0
	// 100000504: ef ff ff 97  bl  _caller
	f.code("saver", 0, "fa 67 bb a9 f8 5f 01 a9 f6 57 02 a9 f4 4f 03 a9 fd 7b 04 a9 fd 03 01 91 f3 03 04 aa f4 03 03 aa f5 03 02 aa f6 03 01 aa f7 03 00 aa ef ff ff 97")
	m.stp(junk|26, junk|25, -80, true)
	m.stp(junk|24, junk|23, 16, false)
	m.stp(junk|22, junk|21, 32, false)
	m.stp(junk|20, junk|19, 48, false) // main's
	m.stp(m.fp, m.lr, 64, false)
	m.fp = m.sp + 64
	m.bl("saver", 0x2c, "caller")
	// 1000004c0: fd 7b bf a9  stp x29, x30, [sp, #-16]!
	// 1000004c4: fd 03 00 91  mov x29, sp
	// 1000004c8: b3 00 00 94  bl  _leaf_asm
	f.code("caller", 0, "fd 7b bf a9 fd 03 00 91 b3 00 00 94")
	m.stp(m.fp, m.lr, -16, true)
	m.fp = m.sp
	m.bl("caller", 8, "leaf_asm")
	// leaf_asm never touches SP, FP or LR:
	// 100000794: 00 04 00 91  add x0, x0, #1
	// 100000798: 00 0c 00 ca  eor x0, x0, x0, lsl #3
	// 10000079c: 00 1c 00 91  add x0, x0, #7
	// 1000007a0: c0 03 5f d6  ret
	f.code("leaf_asm", 0, "00 04 00 91 00 0c 00 ca 00 1c 00 91 c0 03 5f d6")
	return &machtest.Layout{Regs: unwind.Regs{PC: f.sym("leaf_asm", off), SP: m.sp, FP: m.fp, LR: m.lr}, Words: m.words}
}

// framelessCase is one thread of the test: its stack and the walk
// expected from it.
type framelessCase struct {
	name   string
	layout *machtest.Layout
	want   []uint64 // the PC and the return addresses, leaf first
	names  string   // the functions, leaf first, as pprof names them
}

// framelessCases lays out a thread interrupted at each instruction of
// leaf_asm called through caller, saver and main, and on x86_64 one more
// through nofp_caller (frameless too) and main. Thread i's stack region
// is [hi(i)-stackSize, hi(i)).
func framelessCases(t *testing.T, arch string, hi func(i int) uint64) []framelessCase {
	f := loadFixtureCode(t, arch, progSlide)
	var cs []framelessCase
	for _, off := range []uint64{0, 4, 8, 12} { // each instruction of leaf_asm, its ret included
		entry := hi(len(cs)) - 0x40
		var l *machtest.Layout
		var want []uint64
		switch arch {
		case "x86_64":
			m := x86Main(f, entry-8, "saver") // RSP is 8 off 16-byte alignment at entry
			m.saver()
			m.caller()
			l = m.leaf(off)
			want = []uint64{f.sym("leaf_asm", off), f.callReturn("caller", 4, "leaf_asm"), f.callReturn("saver", 0x25, "caller"), f.callReturn("main", 0x2c, "saver")}
		case "arm64":
			l = arm64Chain(f, entry, off)
			want = []uint64{f.sym("leaf_asm", off), f.callReturn("caller", 8, "leaf_asm"), f.callReturn("saver", 0x2c, "caller"), f.callReturn("main", 0x28, "saver")}
		}
		cs = append(cs, framelessCase{name: fmt.Sprintf("leaf_asm+%d", off), layout: l, want: want, names: "leaf_asm;caller;saver;main"})
	}
	if arch == "x86_64" {
		m := x86Main(f, hi(len(cs))-0x40-8, "nofp_caller")
		m.nofpCaller()
		cs = append(cs, framelessCase{name: "via nofp_caller", layout: m.leaf(4),
			want:  []uint64{f.sym("leaf_asm", 4), f.callReturn("nofp_caller", 7, "leaf_asm"), f.callReturn("main", 0x3a, "nofp_caller")},
			names: "leaf_asm;nofp_caller;main"})
	}
	return cs
}

// TestModelCompactFramelessLeaf samples threads of the model task
// interrupted inside the compact unwind fixture's frameless assembly leaf
// with the darwin Target's compact unwind walk on (SetCompactUnwind),
// on arm64 and x86_64. Each thread's stack is what the fixture's code
// lays out (see framelessCases): on x86_64 the leaf pushed nothing, its
// return address is at RSP and RBP still holds its caller's frame; on
// arm64 it is in LR. Target.Capture must return exactly the leaf, its
// caller and every further caller up to main, with no frame missing or
// repeated, walked by the table's rules (every frame compact, none by
// frame pointers: counted by walking the capture's own registers and
// stack copy again with the Target's table set, as Capture does not
// report the counts); the real sampler and pprof exporter name the same
// stacks. On x86_64 the same captures with the option off miss the
// leaf's caller, which only its compact rule finds.
func TestModelCompactFramelessLeaf(t *testing.T) {
	for _, arch := range []string{"arm64", "x86_64"} {
		t.Run(arch, func(t *testing.T) {
			k := machtest.New()
			uarch := unwind.ArchARM64
			if arch == "x86_64" {
				uarch = unwind.ArchAMD64
				k.GOARCHValue = "amd64"
				k.VABits = 0
			}
			task := k.NewTask(t, "/Users/dev/prog", []fixture.TaskImage{{File: compactFixture(arch), Path: "/Users/dev/prog", Slide: progSlide}})
			t.Cleanup(func() { k.Check(t) })
			hi := func(i int) uint64 { return stackTop - uint64(i)*stackApart }
			cases := framelessCases(t, arch, hi)
			for i, c := range cases {
				th := task.AddThread(c.name)
				th.Busy = true
				th.SetStacks(uarch, hi(i), stackSize, &machtest.Stack{Layout: c.layout})
			}
			tg, err := mach.AttachKernel(k, task.PID, target.Options{Continuous: true})
			if err != nil {
				t.Fatalf("AttachKernel: %v", err)
			}
			t.Cleanup(func() { tg.Release() })
			ids, err := tg.Threads(nil)
			if err != nil || len(ids) != len(cases) {
				t.Fatalf("Threads: %v, %v", ids, err)
			}
			c := target.NewCapture(64, 64<<10)

			// The frame-pointer walk: on x86_64 RBP is the caller's
			// record, whose return address is into the caller's caller.
			if arch == "x86_64" {
				if err := tg.Capture(ids[0], c); err != nil {
					t.Fatal(err)
				}
				if slices.Equal(c.PCs, cases[0].want) {
					t.Errorf("the frame-pointer walk found %#x too: the test does not show the compact rule at work", c.PCs)
				}
				t.Logf("frame pointers alone: %#x", c.PCs)
			}

			tg.SetCompactUnwind(true)
			// The first capture asks for the program's table (unless
			// an earlier test of this process built it); Images builds
			// it from the task's memory.
			if _, err := tg.Images(); err != nil {
				t.Fatal(err)
			}
			if err := tg.Capture(ids[0], c); err != nil {
				t.Fatal(err)
			}
			if _, err := tg.Images(); err != nil {
				t.Fatal(err)
			}
			imgs := tg.CompactUnwind()
			if imgs.Built() != 1 {
				t.Fatalf("%d tables built after the first capture, want 1 (the program's)", imgs.Built())
			}
			for i, cs := range cases {
				if err := tg.Capture(ids[i], c); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(c.PCs, cs.want) || c.Walk.Stop != unwind.StopEnd {
					t.Errorf("%s: Capture walked %#x (%v), want %#x (%s) to the end", cs.name, c.PCs, c.Walk.Stop, cs.want, cs.names)
				}
				if c.Walk.CFIFrames != len(cs.want) {
					t.Errorf("%s: %d frames stepped by compact rules, want all %d", cs.name, c.Walk.CFIFrames, len(cs.want))
				}
			}

			win := record(t, tg, 300*time.Millisecond)
			got := stacks(t, win)
			t.Logf("sampled stacks: %v", got)
			var want []string
			for _, cs := range cases {
				if !slices.Contains(want, cs.names) {
					want = append(want, cs.names)
				}
			}
			for s, n := range got {
				if !slices.Contains(want, s) {
					t.Errorf("sampled stack %q (%d samples) is none of %q", s, n, want)
				}
			}
			for _, s := range want {
				if got[s] == 0 {
					t.Errorf("stack %q never sampled", s)
				}
			}
		})
	}
}
