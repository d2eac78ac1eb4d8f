package mach_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// The darwin Target walking samples inside a function whose compact
// unwind entry is in DWARF mode: odd in unwind/compact's dwarf fixtures
// (testdata/build.sh: clang -target {arm64,x86_64}-apple-macos11,
// ld64.lld-14), called main > dcaller > odd, calling dleaf, a frameless
// leaf. llvm-objdump-14 --unwind-info prints, for x86_64, odd 0x04000018
// (UNWIND_X86_64_MODE_DWARF, FDE at __eh_frame offset 0x18), dleaf
// 0x02020400 (STACK_IMMD, 16 bytes, rbx pushed), dcaller 0x01000000
// (RBP_FRAME); for arm64 odd 0x03000018 (UNWIND_ARM64_MODE_DWARF), dleaf
// 0x02000000 (FRAMELESS), dcaller 0x04000000 (FRAME). odd keeps no frame
// record, so without its FDE a walk takes dcaller's record for odd's and
// skips dcaller.

// dwarfFixture is the DWARF-mode fixture program for arch.
func dwarfFixture(arch string) string {
	return filepath.Join("..", "unwind", "compact", "testdata", "dwarf_"+arch)
}

// dwarfCase lays out a thread at odd+off (leaf < 0) or, odd having called
// dleaf at its call, at dleaf+leaf; its stack begins at entry (main's
// SP at its first instruction; x86_64: main's return address, 0, there).
// It returns the layout and the PCs a walk must give.
func dwarfCase(f *fixtureCode, entry uint64, off, leaf int) (*machtest.Layout, []uint64) {
	f.t.Helper()
	switch f.arch {
	case "x86_64":
		m := &x86Frames{f: f, rsp: entry, words: map[uint64]uint64{entry: 0}}
		// 100000370: 55              pushq %rbp
		// 100000371: 48 89 e5        movq  %rsp, %rbp
		// 100000374: bf 03 00 00 00  movl  $3, %edi
		// 100000379: e8 e2 ff ff ff  callq _dcaller
		f.code("main", 0, "55 48 89 e5 bf 03 00 00 00 e8 e2 ff ff ff")
		m.push(0) // the outermost frame's RBP: the chain ends
		m.rbp = m.rsp
		m.call("main", 9, "dcaller")
		// 100000360: 55              pushq %rbp
		// 100000361: 48 89 e5        movq  %rsp, %rbp
		// 100000364: e8 c7 ff ff ff  callq _odd
		f.code("dcaller", 0, "55 48 89 e5 e8 c7 ff ff ff")
		m.push(m.rbp)
		m.rbp = m.rsp
		m.call("dcaller", 4, "odd")
		// 100000330: 48 83 ec 28     subq  $40, %rsp
		// 100000334: 48 89 5c 24 10  movq  %rbx, 16(%rsp)
		// 100000339: 48 89 fb        movq  %rdi, %rbx
		// 10000033c: e8 0f 00 00 00  callq _dleaf (returned, below 17)
		// 100000341: 48 01 d8        addq  %rbx, %rax
		// 100000344: 48 8b 5c 24 10  movq  16(%rsp), %rbx
		// 100000349: 48 83 c4 28     addq  $40, %rsp
		// 10000034d: c3              retq
		f.code("odd", 0, "48 83 ec 28 48 89 5c 24 10 48 89 fb e8 0f 00 00 00 48 01 d8 48 8b 5c 24 10 48 83 c4 28 c3")
		want := []uint64{f.callReturn("dcaller", 4, "odd"), f.callReturn("main", 9, "dcaller")}
		if off >= 4 {
			m.rsp -= 40
		}
		if off >= 9 {
			m.words[m.rsp+16] = junk | 3 // main's rbx
		}
		if off >= 29 {
			m.rsp += 40
		}
		if leaf < 0 {
			pc := f.sym("odd", uint64(off))
			return &machtest.Layout{Regs: unwind.Regs{PC: pc, SP: m.rsp, FP: m.rbp}, Words: m.words}, append([]uint64{pc}, want...)
		}
		m.call("odd", 12, "dleaf")
		// 100000350: 53              pushq %rbx
		// 100000351: 48 8d 47 01     leaq  1(%rdi), %rax
		// 100000355: 5b              popq  %rbx
		f.code("dleaf", 0, "53 48 8d 47 01 5b")
		if leaf >= 1 {
			m.push(3) // odd's rbx: main's argument
		}
		pc := f.sym("dleaf", uint64(leaf))
		return &machtest.Layout{Regs: unwind.Regs{PC: pc, SP: m.rsp, FP: m.rbp}, Words: m.words}, append([]uint64{pc, f.callReturn("odd", 12, "dleaf")}, want...)
	}
	m := &arm64Frames{f: f, sp: entry, words: map[uint64]uint64{}}
	// 100000388: fd 7b bf a9  stp x29, x30, [sp, #-16]!
	// 10000038c: fd 03 00 91  mov x29, sp
	// 100000390: 60 00 80 52  mov w0, #3
	// 100000394: f7 ff ff 97  bl  _dcaller
	f.code("main", 0, "fd 7b bf a9 fd 03 00 91 60 00 80 52 f7 ff ff 97")
	m.stp(m.fp, m.lr, -16, true) // FP and LR zero: the chain ends
	m.fp = m.sp
	m.bl("main", 12, "dcaller")
	// 100000370: fd 7b bf a9  stp x29, x30, [sp, #-16]!
	// 100000374: fd 03 00 91  mov x29, sp
	// 100000378: f2 ff ff 97  bl  _odd
	f.code("dcaller", 0, "fd 7b bf a9 fd 03 00 91 f2 ff ff 97")
	m.stp(m.fp, m.lr, -16, true)
	m.fp = m.sp
	m.bl("dcaller", 8, "odd")
	// 100000340: ff 83 00 d1  sub sp, sp, #32
	// 100000344: fe 0b 00 f9  str x30, [sp, #16]
	// 100000348: f3 07 00 f9  str x19, [sp, #8]
	// 10000034c: f3 03 00 aa  mov x19, x0
	// 100000350: 06 00 00 94  bl  _dleaf (returned, from 20)
	// 100000354: 00 00 13 8b  add x0, x0, x19
	// 100000358: f3 07 40 f9  ldr x19, [sp, #8]
	// 10000035c: fe 0b 40 f9  ldr x30, [sp, #16]
	// 100000360: ff 83 00 91  add sp, sp, #32
	// 100000364: c0 03 5f d6  ret
	f.code("odd", 0, "ff 83 00 d1 fe 0b 00 f9 f3 07 00 f9 f3 03 00 aa 06 00 00 94 00 00 13 8b f3 07 40 f9 fe 0b 40 f9 ff 83 00 91 c0 03 5f d6")
	want := []uint64{f.callReturn("dcaller", 8, "odd"), f.callReturn("main", 12, "dcaller")}
	if off >= 4 {
		m.sp -= 32
	}
	if off >= 8 {
		m.words[m.sp+16] = m.lr
	}
	if off >= 12 {
		m.words[m.sp+8] = junk | 19
	}
	if leaf >= 0 {
		m.bl("odd", 16, "dleaf")
		// 100000368: 00 04 00 91  add x0, x0, #1
		// 10000036c: c0 03 5f d6  ret
		f.code("dleaf", 0, "00 04 00 91 c0 03 5f d6")
		pc := f.sym("dleaf", uint64(leaf))
		return &machtest.Layout{Regs: unwind.Regs{PC: pc, SP: m.sp, FP: m.fp, LR: m.lr}, Words: m.words}, append([]uint64{pc, f.callReturn("odd", 16, "dleaf")}, want...)
	}
	if off >= 20 {
		m.lr = f.callReturn("odd", 16, "dleaf") // stale: into odd itself
	}
	if off >= 32 {
		m.lr = m.words[m.sp+16]
	}
	if off >= 36 {
		m.sp += 32
	}
	pc := f.sym("odd", uint64(off))
	return &machtest.Layout{Regs: unwind.Regs{PC: pc, SP: m.sp, FP: m.fp, LR: m.lr}, Words: m.words}, append([]uint64{pc}, want...)
}

// TestModelCompactDWARFMode samples threads of the model task interrupted
// at every instruction of odd, whose compact entry is in DWARF mode, and
// inside the frameless leaf it calls (x86_64: before and after its push
// of rbx), on arm64 and x86_64, with the darwin Target's table walk on:
// Capture must return each thread's PC and every caller up to main, odd's
// caller by the FDE read from the task's own __eh_frame, every frame but
// main's (past the table's last range) by a table. With the walk off,
// frame records alone skip dcaller from odd.
func TestModelCompactDWARFMode(t *testing.T) {
	offs := map[string][]int{"x86_64": {0, 4, 9, 12, 17, 20, 25, 29}, "arm64": {0, 4, 8, 12, 16, 20, 24, 28, 32, 36}}
	leaves := map[string][]int{"x86_64": {0, 1, 5}, "arm64": {0, 4}}
	for _, arch := range []string{"arm64", "x86_64"} {
		t.Run(arch, func(t *testing.T) {
			k := machtest.New()
			uarch := unwind.ArchARM64
			if arch == "x86_64" {
				uarch = unwind.ArchAMD64
				k.GOARCHValue = "amd64"
				k.VABits = 0
			}
			task := k.NewTask(t, "/Users/dev/dwarf", []fixture.TaskImage{{File: dwarfFixture(arch), Path: "/Users/dev/dwarf", Slide: progSlide}})
			t.Cleanup(func() { k.Check(t) })
			f := loadCode(t, arch, dwarfFixture(arch), progSlide)
			hi := func(i int) uint64 { return stackTop - uint64(i)*stackApart }
			type tcase struct {
				name string
				want []uint64
			}
			var cases []tcase
			add := func(name string, off, leaf int) {
				entry := hi(len(cases)) - 0x40
				if arch == "x86_64" {
					entry -= 8 // RSP is 8 off 16-byte alignment at entry
				}
				l, want := dwarfCase(f, entry, off, leaf)
				th := task.AddThread(name)
				th.Busy = true
				th.SetStacks(uarch, hi(len(cases)), stackSize, &machtest.Stack{Layout: l})
				cases = append(cases, tcase{name, want})
			}
			for _, off := range offs[arch] {
				add(fmt.Sprintf("odd+%d", off), off, -1)
			}
			callAt := map[string]int{"x86_64": 12, "arm64": 16}[arch]
			for _, leaf := range leaves[arch] {
				add(fmt.Sprintf("dleaf+%d", leaf), callAt, leaf)
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
			// Frame records alone: x86_64 at odd+9 takes dcaller's
			// record for odd's; arm64 at odd+20, LR stale after the
			// call of dleaf, names odd twice.
			probe := map[string]int{"x86_64": 2, "arm64": 5}[arch]
			if err := tg.Capture(ids[probe], c); err != nil {
				t.Fatal(err)
			}
			if slices.Equal(c.PCs, cases[probe].want) {
				t.Errorf("the frame-record walk found %#x too: the test does not show the FDE at work", c.PCs)
			}
			tg.SetCompactUnwind(true)
			if _, err := tg.Images(); err != nil {
				t.Fatal(err)
			}
			if err := tg.Capture(ids[0], c); err != nil {
				t.Fatal(err)
			}
			if _, err := tg.Images(); err != nil { // builds the table the capture asked for
				t.Fatal(err)
			}
			if tg.CompactUnwind().Built() != 1 {
				t.Fatalf("%d tables built, want the program's", tg.CompactUnwind().Built())
			}
			for i, cs := range cases {
				if err := tg.Capture(ids[i], c); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(c.PCs, cs.want) || c.Walk.Stop != unwind.StopEnd || c.Walk.CFIFrames != len(cs.want)-1 {
					t.Errorf("%s: Capture walked %#x (%v, %d frames by a table), want %#x to the end, all but main's by a table", cs.name, c.PCs, c.Walk.Stop, c.Walk.CFIFrames, cs.want)
				}
			}
		})
	}
}
