//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// ownVDSOFunc returns the profiler's vDSO and the address, in it, of the
// exported function called name.
func ownVDSOFunc(t *testing.T, name string) (vdso []byte, addr uint64) {
	t.Helper()
	own, err := ownVDSO()
	if err != nil {
		t.Fatalf("the profiler's vdso: %v", err)
	}
	f, err := elf.NewFile(bytes.NewReader(own))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return own, s.Value
		}
	}
	t.Fatalf("the vdso exports no %s: %v", name, syms)
	return nil, 0
}

// TestVDSOCopyReadsWithinTheVDSO: a target's [vdso] read through the
// profiler's copy gives the copy's bytes at the same offset, and a read
// that leaves the mapping is an error, not a short or wrapped read.
func TestVDSOCopyReadsWithinTheVDSO(t *testing.T) {
	own, _ := ownVDSOFunc(t, "__vdso_clock_gettime")
	const start = 0x7f0000000000
	r := vdsoMemory(&images.Image{Path: "[vdso]", Start: start, Limit: start + uint64(len(own))}, nil)
	if r == nil {
		t.Fatal("no reader of a vdso of the profiler's size")
	}
	got := make([]byte, 16)
	if err := r.ReadMemory(start+uint64(len(own))-16, got); err != nil || !bytes.Equal(got, own[len(own)-16:]) {
		t.Errorf("last 16 bytes: %x, %v; want %x", got, err, own[len(own)-16:])
	}
	for _, addr := range []uint64{start - 1, start + uint64(len(own)) - 15, 0, ^uint64(0) - 4} {
		if err := r.ReadMemory(addr, got); !errors.Is(err, errOutsideVDSO) {
			t.Errorf("16 bytes at %#x: %v, want an error", addr, err)
		}
	}
	if r := vdsoMemory(&images.Image{Path: "[vdso]", Start: start, Limit: start + uint64(len(own)) + 4096}, nil); r != nil {
		t.Errorf("a vdso of another size is read through the profiler's copy")
	}
}

// TestProcessRingsNameAChildsVDSO: a child's [vdso], of which the process
// rings' records tell, is an image of its samples' versions that symcache
// names functions of, read from the profiler's copy (the child may be gone
// by then), as the command's own is.
func TestProcessRingsNameAChildsVDSO(t *testing.T) {
	own, fn := ownVDSOFunc(t, "__vdso_clock_gettime")
	r0 := fakeRing(4096)
	p := newFakeProcessRings(100, r0)
	exe := &images.Image{Path: "/bin/sh", Format: images.FormatELF, Start: 0x400000, Limit: 0x500000}
	p.setBase(images.NewSet([]*images.Image{exe}), func() string { return "/bin/sh" })

	const childVDSO, parentVDSO = 0x7ffff7fc0000, 0x7ffff7f00000
	r0.write(mmap2Record(5, 100, parentVDSO, uint64(len(own)), "[vdso]"))
	r0.write(forkRecord(10, 200, 100))
	r0.write(execRecord(20, 200))
	r0.write(mmap2Record(21, 200, 0x400000, 0x100000, "/bin/child"))
	r0.write(mmap2Record(22, 200, childVDSO, uint64(len(own)), "[vdso]"))
	r0.write(processRecordAt(30, 200, 200, childVDSO+fn+4))
	r0.write(processRecordAt(31, 100, 100, parentVDSO+fn+4))
	p.collect()

	names := symcache.New(symcache.Options{})
	caps := []*target.Capture{target.NewCapture(8, 0)}
	for _, pid := range []int{200, 100} {
		if n := p.take(pid, caps); n != 1 {
			t.Fatalf("PID %d: %d samples, want 1", pid, n)
		}
		c := caps[0]
		im := c.Images.Lookup(c.PCs[0])
		if im == nil || im.Path != "[vdso]" || im.Memory == nil {
			t.Fatalf("PID %d: sample at %#x in image %v, want [vdso] read from memory", pid, c.PCs[0], im)
		}
		got := names.Symbolize(im, c.PCs[0], false)
		if len(got) == 0 || (got[0].Function != "__vdso_clock_gettime" && got[0].Function != "clock_gettime") {
			t.Errorf("PID %d: sample in the vdso named %v, want __vdso_clock_gettime or its alias clock_gettime", pid, got)
		}
	}
}

// TestCFIWalkLeavesTheVDSO: kernel samples of a thread that calls
// clock_gettime in a loop, in a program without frame pointers, walk out
// of the vDSO to the program's functions and start_thread: with --unwind
// cfi (no frame records) by the vDSO's unwind table, read from the
// profiler's copy; with auto by its frame records (vdsoTableUse).
func TestCFIWalkLeavesTheVDSO(t *testing.T) {
	bin := testprog.BuildCNoFP(t, "vdsoloop.c")
	for _, m := range []unwind.Method{unwind.MethodCFI, unwind.MethodAuto} {
		t.Run(fmt.Sprint(m), func(t *testing.T) {
			p := testprog.Start(t, bin, "60")
			tg, err := Attach(p.PID, target.Options{Continuous: true, Unwind: m, Kernel: target.KernelSampling{Period: 2 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tg.Close() })
			set, err := tg.Images()
			if err != nil {
				t.Fatal(err)
			}
			var vdso, prog *images.Image
			for _, im := range set.Images() {
				switch im.Path {
				case "[vdso]":
					vdso = im
				case bin:
					prog = im
				}
			}
			if vdso == nil || prog == nil {
				t.Fatalf("no [vdso] or %s among %v", bin, set.Images())
			}
			tids, err := tg.Threads(nil)
			if err != nil {
				t.Fatal(err)
			}
			var tid target.ThreadID
			for _, id := range tids {
				if int(id) != p.PID {
					tid = id
				}
			}
			if tid == 0 {
				t.Fatalf("threads %v: no thread but main", tids)
			}
			c := target.NewCapture(64, 64<<10)
			if err := captureStop(t, tg, tid, c); err != nil { // opens its ring
				t.Fatal(err)
			}
			inVDSO, out, tables := 0, 0, 0
			var bad []string
			if !testprog.Poll(20*time.Second, func() bool {
				if !newSample(t, tg, tid, c) || len(c.PCs) == 0 || !vdso.Contains(c.PCs[0]) {
					return false
				}
				inVDSO++
				// Out of the vDSO into the program (clockloop, run),
				// and on to the outermost frame (start_thread's caller).
				left := false
				for _, pc := range c.PCs[1:] {
					left = left || prog.Contains(pc)
				}
				if left && !c.Walk.Stop.Truncated() {
					out++
				} else if len(bad) < 5 {
					bad = append(bad, fmt.Sprintf("%#x (%v, %d CFI frames)", c.PCs, c.Walk.Stop, c.Walk.CFIFrames))
				}
				if len(c.PCs) > 1 && c.Walk.CFIFrames == len(c.PCs)-1 {
					tables++ // every frame by the tables, the vDSO's too
				}
				return inVDSO == 40
			}) {
				t.Fatalf("%d kernel samples in the vdso in 20 s, want 40", inVDSO)
			}
			t.Logf("%d of %d samples in the vdso walked out of it to the outermost frame, %d all by the tables", out, inVDSO, tables)
			if out < inVDSO*95/100 {
				t.Errorf("%d of %d samples in the vdso walked out of it to the outermost frame, want 95%%: %v", out, inVDSO, bad)
			}
			if m == unwind.MethodCFI && tables < inVDSO*95/100 {
				t.Errorf("%d of %d samples in the vdso walked all by the tables, want 95%%", tables, inVDSO)
			}
		})
	}
}

// TestResolverHasTheVDSOTableOnlyWhereAsked: a resolver built for walks
// without frame records (--unwind cfi) finds the vDSO's rule at
// __vdso_clock_gettime; one for auto, whose chain checks take the vDSO's
// frame records on trust, knows the vDSO's addresses but has no table
// there, except for the interrupted frame (LeafRule): the function's
// entry, where it has pushed nothing.
func TestResolverHasTheVDSOTableOnlyWhereAsked(t *testing.T) {
	own, fn := ownVDSOFunc(t, "__vdso_clock_gettime")
	const start = 0x7f0000000000
	im := &images.Image{Path: "[vdso]", Format: images.FormatELF, Start: start, Limit: start + uint64(len(own))}
	im.Memory = vdsoMemory(im, nil)
	set := images.NewSet([]*images.Image{im})
	if r := resolverOf(set, true); r.Covers(start + fn) {
		if rule, _ := r.Rule(start + fn + 1); rule == nil {
			t.Errorf("no rule at __vdso_clock_gettime+1 with the vdso's table")
		}
	} else {
		t.Fatal("the resolver does not cover the vdso")
	}
	if r := resolverOf(set, false); !r.Covers(start + fn) {
		t.Error("the resolver without the vdso's table does not know its addresses")
	} else if rule, fp := r.Rule(start + fn + 1); rule != nil || fp {
		t.Errorf("rule %v (frame pointers %v) at __vdso_clock_gettime+1 without the vdso's table", rule, fp)
	} else if leaf := r.LeafRule(start + fn); leaf == nil || leaf.CFA != unwind.CFASP || leaf.CFAOff != 8 {
		t.Errorf("leaf rule %v at __vdso_clock_gettime's entry without the vdso's table, want CFA=SP+8", leaf)
	}
}
