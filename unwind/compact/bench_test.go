package compact

import (
	"debug/macho"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// fixtureWalk prepares the x86_64 or arm64 fixture's leaf_asm > caller >
// main stack, sampled inside leaf_asm, and its images.
func fixtureWalk(t testing.TB, arch string) (*Images, *unwind.Stack, unwind.Regs, unwind.Arch) {
	f, err := macho.Open(fixturePath(arch))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	tab, _, err := FromMachO(f)
	if err != nil {
		t.Fatal(err)
	}
	im := loadImage(t, f)
	m := newMachine(t, im)
	m.pc = im.sym(t, "main")
	for m.step() {
	}
	m.call("caller", im.callSite(t, "main", "caller"), -1)
	m.call("leaf_asm", im.callSite(t, "caller", "leaf_asm"), -1)
	m.pc += 4
	return fixtureImages(t, im, tab), &m.stack, m.regs(), tab.Arch()
}

// BenchmarkBuildTable measures Parse plus NewTable on the fixture and, if
// MACHO_BENCH names one, on a larger Mach-O.
func BenchmarkBuildTable(b *testing.B) {
	paths := map[string]string{"fixture_arm64": fixturePath("arm64"), "fixture_x86_64": fixturePath("x86_64"), "big_arm64": filepath.Join("testdata", "big_arm64")}
	if p := os.Getenv("MACHO_BENCH"); p != "" {
		paths["MACHO_BENCH"] = p
	}
	for name, p := range paths {
		b.Run(name, func(b *testing.B) {
			f, err := macho.Open(p)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.ReportAllocs()
			var tab *Table
			for b.Loop() {
				if tab, _, err = FromMachO(f); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tab.Len()), "entries")
		})
	}
}

// BenchmarkWalk measures WalkCFI over the fixture's three-frame stack
// (image lookup, rule lookup and step per frame).
func BenchmarkWalk(b *testing.B) {
	for _, arch := range fixtureArchs {
		b.Run(arch, func(b *testing.B) {
			imgs, st, regs, a := fixtureWalk(b, arch)
			w := mustWalker(b, a)
			dst := make([]uint64, 0, 64)
			b.ReportAllocs()
			frames := 0
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := threadCPU(b)
			for b.Loop() {
				var pcs []uint64
				pcs, _ = w.WalkCFI(regs, st, imgs, dst)
				frames += len(pcs)
			}
			cpu = threadCPU(b) - cpu
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(frames), "cpu-ns/frame")
		})
	}
}

// deepStack returns a synthetic x86_64 image and a 64-frame stack in it:
// every frame in a frameless function (stack size 32, rbx saved), in an
// RBP-frame function, or, for "dwarf", in a function of the frameless
// layout whose DWARF-mode entry names its FDE in the image's __eh_frame.
func deepStack(tb testing.TB, kind string) (*Images, *unwind.Stack, unwind.Regs) {
	frameless := kind != "rbp_frame"
	const (
		base   = 0x1_0000_0000
		frames = 64
		sp0    = 0x7000_0000
	)
	enc := uint32(0x01000000) // RBP frame, no registers
	switch kind {
	case "frameless":
		enc = 0x02040401 // STACK_IMMD, 4*8 bytes, 1 register, permutation 1 (rbx)
	case "dwarf":
		enc = 0x04000018 // UNWIND_X86_64_MODE_DWARF, the FDE at 0x18
	}
	s, err := Parse(buildSection(nil, nil, []synthPage{{regular: true, entries: []Entry{{0x1000, enc}}}}, 0x2000, nil))
	if err != nil {
		tb.Fatal(err)
	}
	tab, err := NewTable(s, unwind.ArchAMD64, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if kind == "dwarf" {
		// A CIE (CFA = rsp+8, return address at CFA-8, absolute
		// pointers) and, at 0x18, the FDE of [0x1000, 0x2000): CFA =
		// rsp+32.
		eh := []byte{20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0, 0x0c, 7, 8, 0x90, 1, 0, 0,
			28, 0, 0, 0, 0x1c, 0, 0, 0}
		eh = binary.LittleEndian.AppendUint64(eh, base+0x1000)
		eh = binary.LittleEndian.AppendUint64(eh, 0x1000)
		eh = append(eh, 0, 0x0e, 32, 0, 0, 0, 0, 0)
		tab.withEHFrame(eh, base+0x1800, base, 0x2000)
	}
	imgs, err := NewImages(unwind.ArchAMD64, []Image{{Start: base, End: base + 0x2000, Base: base, Table: tab}})
	if err != nil {
		tb.Fatal(err)
	}
	stack := make([]byte, 32*frames+16)
	put := func(off int, v uint64) { binary.LittleEndian.PutUint64(stack[off:], v) }
	for i := 0; i < frames; i++ {
		ret := uint64(base + 0x1010)
		if i == frames-1 {
			ret = 0
		}
		if frameless {
			put(32*i+24, ret) // the return address above 2 words and rbx
		} else {
			put(32*i, sp0+32*uint64(i+1)) // [RBP]: the caller's RBP
			put(32*i+8, ret)
		}
	}
	st := &unwind.Stack{Base: sp0, Data: stack, Lo: sp0, Hi: sp0 + uint64(len(stack))}
	return imgs, st, unwind.Regs{PC: base + 0x1004, SP: sp0, FP: sp0}
}

// BenchmarkWalkDeep walks 64 frames of frameless functions (return
// address at SP+size-8) or of RBP-frame functions by compact rules, or of
// DWARF-mode functions by their FDE's row.
func BenchmarkWalkDeep(b *testing.B) {
	for _, name := range []string{"frameless", "rbp_frame", "dwarf"} {
		b.Run(name, func(b *testing.B) {
			imgs, st, regs := deepStack(b, name)
			w := mustWalker(b, unwind.ArchAMD64)
			dst := make([]uint64, 0, 128)
			pcs, res := w.WalkCFI(regs, st, imgs, dst)
			if len(pcs) != 64 || res.Stop != unwind.StopEnd || res.CFIFrames != 64 {
				b.Fatalf("walk of %d frames, %+v", len(pcs), res)
			}
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := threadCPU(b)
			for b.Loop() {
				w.WalkCFI(regs, st, imgs, dst)
			}
			cpu = threadCPU(b) - cpu
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/64, "ns/frame")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/64, "cpu-ns/frame")
		})
	}
}

// threadCPU returns the CPU time of the calling OS thread. The walk
// benchmarks report it per frame (cpu-ns/frame) besides wall time: on a
// loaded machine wall time also counts the time the thread waited for a
// CPU. The benchmark locks its goroutine to its thread around the loop.
func threadCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}
