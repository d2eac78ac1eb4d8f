package unwind

import (
	"encoding/binary"
	"testing"
)

// patternMem answers fallback reads with bytes derived from the address, so
// the fuzzer also drives walks that leave the bulk copy. It checks that the
// walker only asks for memory inside the stack bounds.
type patternMem struct {
	t      *testing.T
	lo, hi uint64
	fail   uint64 // reads at this address fail
	reads  int
}

func (m *patternMem) ReadMemory(addr uint64, dst []byte) error {
	m.reads++
	if addr < m.lo || addr > m.hi || m.hi-addr < uint64(len(dst)) {
		m.t.Fatalf("fallback read [%#x, +%d) outside [%#x, %#x)", addr, len(dst), m.lo, m.hi)
	}
	if addr == m.fail {
		return errFake
	}
	for i := 0; i+8 <= len(dst); i += 8 {
		a := addr + uint64(i)
		// Mostly a plausible next frame pointer above addr, sometimes junk.
		v := a + 16 + (a*0x9e3779b97f4a7c15)>>58*16
		if (a>>4)%7 == 3 {
			v = a * 0x9e3779b97f4a7c15
		}
		binary.LittleEndian.PutUint64(dst[i:], v)
	}
	return nil
}

// FuzzWalk: arbitrary stack bytes and registers never panic, never loop,
// never exceed the frame limit or the output capacity, and never read
// outside the stack bounds.
func FuzzWalk(f *testing.F) {
	// Seeds: clean chains for both arches, a loop, async records, PAC bits.
	chain := newSynth(testBase, 1024)
	chain.chain(testBase+64, 20, 32, testRet)
	f.Add(chain.mem, uint64(testBase), uint64(0), uint64(1024), uint64(testPC), uint64(testBase), uint64(testBase+64), uint64(testRet), false, uint16(0), uint16(512), uint64(0))
	f.Add(chain.mem, uint64(testBase), uint64(0), uint64(1024), uint64(testPC), uint64(testBase), uint64(testBase+64), uint64(testRet+99), true, uint16(8), uint16(512), uint64(1<<47-1))
	f.Add(chain.mem[:300], uint64(testBase), uint64(0), uint64(4096), uint64(testPC), uint64(testBase), uint64(testBase+64), uint64(0), true, uint16(0), uint16(64), uint64(0))
	loop := newSynth(testBase, 256)
	loop.put(testBase+64, testBase+128, testRet)
	loop.put(testBase+128, testBase+64, testRet+1)
	f.Add(loop.mem, uint64(testBase), uint64(0), uint64(256), uint64(testPC), uint64(testBase), uint64(testBase+64), uint64(0), false, uint16(0), uint16(512), uint64(0))
	async := newSynth(testBase, 256)
	async.put(testBase+32, 1<<60|(testBase+96), 0x55<<48|testRet)
	async.put(testBase+96, 0, testRet+1)
	f.Add(async.mem, uint64(testBase), uint64(16), uint64(256), uint64(testPC), uint64(testBase), uint64(testBase+32), uint64(testRet), true, uint16(3), uint16(2), uint64(1<<47-1))
	f.Add([]byte{}, uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), false, uint16(0), uint16(0), uint64(0))
	f.Add(make([]byte, 64), ^uint64(0)-63, uint64(0), uint64(64), uint64(1), ^uint64(0)-63, ^uint64(0)-47, uint64(1), true, uint16(0), uint16(10), uint64(0))

	f.Fuzz(func(t *testing.T, data []byte, base, loOff, size, pc, sp, fp, lr uint64, arm bool, maxFrames, capacity uint16, mask uint64) {
		arch := ArchAMD64
		if arm {
			arch = ArchARM64
		}
		max := int(maxFrames) % (MaxMaxFrames + 1)
		lo := base - loOff%4096
		hi := lo + size
		if hi < lo {
			hi = ^uint64(0)
		}
		mem := &patternMem{t: t, lo: lo, hi: hi, fail: fp + 64}
		w, err := NewWalker(Config{Arch: arch, MaxFrames: max, AddrMask: mask, Fallback: mem})
		if err != nil {
			t.Fatal(err)
		}
		st := &Stack{Base: base, Data: data, Lo: lo, Hi: hi}
		dst := make([]uint64, 0, int(capacity)%(MaxMaxFrames+16))
		got, res := w.Walk(Regs{PC: pc, SP: sp, FP: fp, LR: lr}, st, dst)
		if len(got) > w.MaxFrames() {
			t.Fatalf("%d frames, limit %d", len(got), w.MaxFrames())
		}
		if len(got) > cap(dst) || (len(got) > 0 && &got[0] != &dst[:1][0]) {
			t.Fatalf("dst grown or replaced: len %d cap %d", len(got), cap(dst))
		}
		effMask := mask
		if effMask == 0 {
			effMask = ^uint64(0)
		}
		for i, a := range got {
			if a == 0 || a&^effMask != 0 {
				t.Fatalf("frame %d = %#x: zero or unmasked (mask %#x)", i, a, mask)
			}
		}
		// Each record read advances by at least 16 bytes inside [lo, hi):
		// that bounds the work of any walk, loops included.
		if records := uint64(res.FallbackReads); records > (hi-lo)/16+1 {
			t.Fatalf("%d fallback reads in a %d-byte stack", records, hi-lo)
		}
		if res.FallbackReads != mem.reads {
			t.Fatalf("Result.FallbackReads = %d, reader saw %d", res.FallbackReads, mem.reads)
		}
		if uint64(len(got)) > (hi-lo)/16+3 {
			t.Fatalf("%d frames from a %d-byte stack", len(got), hi-lo)
		}
		if res.Hash == 0 || res.Hash != HashPCs(got) || res.Hash != refHash(got) {
			t.Fatalf("Result.Hash = %#x, want %#x (hash of the %d frames returned)", res.Hash, HashPCs(got), len(got))
		}
		if res.Stop > StopNoRoom {
			t.Fatalf("stop reason %d", res.Stop)
		}
		if res.Stop == StopNoRoom && len(got) != cap(dst) {
			t.Fatalf("StopNoRoom with %d of %d slots used", len(got), cap(dst))
		}
		if res.Stop == StopMaxFrames && len(got) != w.MaxFrames() {
			t.Fatalf("StopMaxFrames with %d frames, limit %d", len(got), w.MaxFrames())
		}
	})
}
