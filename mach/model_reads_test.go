package mach_test

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// TestReadsStayInKernelBuffer: a capture whose stack window is 256 KiB
// (SP deep in a 512 KiB stack) copies all of it, in reads of at most
// msg_ool_size_small bytes (32 KiB on an arm64 kernel, 16 KiB on x86_64),
// so the kernel never makes the target's stack copy-on-write: the model's
// stack entry stays whole and its Check finds no virtual copy. The same
// holds for Self captures and for ReadMemory (symbols, tables).
func TestReadsStayInKernelBuffer(t *testing.T) {
	const (
		size   = 512 << 10
		window = 256 << 10
		marker = 0x5eed_f00d
	)
	for _, c := range []struct {
		arch  string
		limit int64
	}{{"arm64", 32 << 10}, {"x86_64", 16 << 10}} {
		t.Run(c.arch, func(t *testing.T) {
			w := newWorld(t, c.arch)
			syms := symbols(t, "prog_"+c.arch)
			leaf, ret := syms["leaf"]+progSlide+4, syms["main"]+progSlide+8
			hi := uint64(stackTop)
			sp := hi - 300<<10
			layout := func(task *machtest.Task) {
				th := task.AddThread("deep")
				th.SetStacks(w.arch, hi, size, &machtest.Stack{Layout: &machtest.Layout{
					Regs: unwind.Regs{PC: leaf, SP: sp, FP: hi - 64},
					// leaf's frame record, [caller's fp = 0, return
					// into main], and a word far up the window.
					Words: map[uint64]uint64{hi - 64: 0, hi - 56: ret, sp + window - 8: marker},
				}})
			}
			check := func(name string, cp *target.Capture, before machtest.Counts) {
				t.Helper()
				after := w.k.Counts()
				reads := after.Calls[machtest.CallVMReadOverwrite] - before.Calls[machtest.CallVMReadOverwrite]
				if len(cp.Stack) != window || cp.StackBase != sp || binary.LittleEndian.Uint64(cp.Stack[window-8:]) != marker {
					t.Errorf("%s: copied %d bytes at %#x, want the %d-byte window at %#x", name, len(cp.Stack), cp.StackBase, window, sp)
				}
				if after.LargestRead > c.limit || reads < window/int(c.limit) {
					t.Errorf("%s: %d reads, the largest %d bytes; want reads of at most %d", name, reads, after.LargestRead, c.limit)
				}
				if !slices.Contains(cp.PCs, ret) {
					t.Errorf("%s: PCs %#x, want the return into main %#x", name, cp.PCs, ret)
				}
				if v := w.k.VirtualCopies(); len(v) > 0 {
					t.Errorf("%s: virtual copies %v", name, v)
				}
			}
			layout(w.task)
			tg := w.attach(t, target.Options{StackBytes: window})
			ids, err := tg.Threads(nil)
			if err != nil || len(ids) != 1 {
				t.Fatalf("Threads: %v, %v", ids, err)
			}
			cp := target.NewCapture(64, window)
			before := w.k.Counts()
			if err := tg.Capture(ids[0], cp); err != nil {
				t.Fatal(err)
			}
			check("Capture", cp, before)
			caps, err := tg.CaptureAll(nil)
			if err != nil || len(caps) != 1 || caps[0].Err != nil {
				t.Fatalf("CaptureAll: %v, %v", caps, err)
			}
			check("CaptureAll", &caps[0], before)
			big := make([]byte, window)
			if err := tg.ReadMemory(sp, big); err != nil || binary.LittleEndian.Uint64(big[window-8:]) != marker {
				t.Fatalf("ReadMemory of %d bytes: %v", len(big), err)
			}
			if l := w.k.Counts().LargestRead; l > c.limit {
				t.Errorf("ReadMemory of %d bytes: a read of %d", len(big), l)
			}
		})
	}
	t.Run("Self", func(t *testing.T) {
		w := selfWorld(t)
		th := w.task.AddThread("deep")
		hi := uint64(stackTop + 8*stackApart)
		th.SetStacks(unwind.ArchARM64, hi, size, &machtest.Stack{Layout: &machtest.Layout{
			Regs:  unwind.Regs{PC: 0x1000, SP: hi - 300<<10, FP: hi - 64},
			Words: map[uint64]uint64{hi - 300<<10 + window - 8: marker},
		}})
		tg, err := mach.SelfKernel(w.k, target.Options{StackBytes: window})
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Release()
		caps, err := tg.CaptureAll(nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, cp := range caps {
			if cp.Err == nil && len(cp.Stack) == window && binary.LittleEndian.Uint64(cp.Stack[window-8:]) == marker {
				found = true
			}
		}
		if !found || w.k.Counts().LargestRead > 32<<10 {
			t.Errorf("Self: the deep thread's window copied: %v; largest read %d, want at most 32 KiB", found, w.k.Counts().LargestRead)
		}
	})
}
