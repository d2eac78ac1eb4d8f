package unwind

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// synth is a synthetic stack: a byte slice standing for the memory at
// [base, base+len(mem)), into which tests write frame records.
type synth struct {
	base uint64
	mem  []byte
}

func newSynth(base uint64, size int) *synth {
	return &synth{base: base, mem: make([]byte, size)}
}

// put writes the 16-byte frame record [next, ret] at fp.
func (s *synth) put(fp, next, ret uint64) {
	off := fp - s.base
	binary.LittleEndian.PutUint64(s.mem[off:], next)
	binary.LittleEndian.PutUint64(s.mem[off+8:], ret)
}

// stack returns a Stack whose bulk copy and bounds cover all of s.
func (s *synth) stack() *Stack {
	return &Stack{Base: s.base, Data: s.mem, Lo: s.base, Hi: s.base + uint64(len(s.mem))}
}

// chain writes n frame records starting at fp0, each step bytes above the
// previous one, with return addresses ret0, ret0+1, ...; the last record's
// saved FP is 0. It returns the expected return addresses.
func (s *synth) chain(fp0 uint64, n int, step uint64, ret0 uint64) []uint64 {
	want := make([]uint64, 0, n)
	fp := fp0
	for i := 0; i < n; i++ {
		next := fp + step
		if i == n-1 {
			next = 0
		}
		s.put(fp, next, ret0+uint64(i))
		want = append(want, ret0+uint64(i))
		fp = next
	}
	return want
}

func mustWalker(t testing.TB, cfg Config) *Walker {
	t.Helper()
	w, err := NewWalker(cfg)
	if err != nil {
		t.Fatalf("NewWalker(%+v): %v", cfg, err)
	}
	return w
}

var arches = []Arch{ArchAMD64, ArchARM64}

const (
	testBase = 0x7ff0_0000_0000
	testPC   = 0x1000_0000
	testRet  = 0x2000_0000
)

func cat(a ...[]uint64) []uint64 {
	var out []uint64
	for _, s := range a {
		out = append(out, s...)
	}
	return out
}

// refHash is the stack hash one address at a time, as the walk's slow path
// folds them in: HashPCs (a loop over pairs) and every Result.Hash must
// agree with it.
func refHash(pcs []uint64) uint64 {
	k := &procHashKey
	s, half := k.s, uint64(0)
	for i, x := range pcs {
		s, half = k.push(s, half, x, i+1)
	}
	return k.finish(s, half, len(pcs))
}

// checkHash checks that a walk's Result.Hash is the hash of exactly the
// addresses it returned.
func checkHash(t testing.TB, got []uint64, res Result) {
	t.Helper()
	if want := refHash(got); res.Hash != want || HashPCs(got) != want || want == 0 {
		t.Errorf("Result.Hash = %#x, want refHash %#x (HashPCs %#x) of %d frames", res.Hash, want, HashPCs(got), len(got))
	}
}

func checkWalk(t *testing.T, got []uint64, res Result, want []uint64, stop StopReason) {
	t.Helper()
	checkHash(t, got, res)
	if !slices.Equal(got, want) {
		t.Errorf("frames = %#x\nwant     %#x", got, want)
	}
	if res.Stop != stop {
		t.Errorf("stop = %v, want %v", res.Stop, stop)
	}
}

func TestNewWalker(t *testing.T) {
	for _, tc := range []struct {
		cfg     Config
		wantErr string
		max     int
	}{
		{cfg: Config{Arch: ArchAMD64}, max: DefaultMaxFrames},
		{cfg: Config{Arch: ArchARM64, MaxFrames: 1}, max: 1},
		{cfg: Config{Arch: ArchARM64, MaxFrames: MaxMaxFrames}, max: MaxMaxFrames},
		{cfg: Config{Arch: ArchARM64, MaxFrames: MaxMaxFrames + 1}, wantErr: "frame limit 10001 out of range"},
		{cfg: Config{Arch: ArchAMD64, MaxFrames: -1}, wantErr: "frame limit -1 out of range"},
		{cfg: Config{}, wantErr: "unsupported architecture Arch(0)"},
		{cfg: Config{Arch: 7}, wantErr: "unsupported architecture Arch(7)"},
	} {
		w, err := NewWalker(tc.cfg)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("NewWalker(%+v) error = %v, want %q", tc.cfg, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("NewWalker(%+v): %v", tc.cfg, err)
			continue
		}
		if w.MaxFrames() != tc.max || w.Arch() != tc.cfg.Arch {
			t.Errorf("NewWalker(%+v) = max %d arch %v, want %d %v", tc.cfg, w.MaxFrames(), w.Arch(), tc.max, tc.cfg.Arch)
		}
	}
}

func TestStrings(t *testing.T) {
	if ArchAMD64.String() != "amd64" || ArchARM64.String() != "arm64" || Arch(9).String() != "Arch(9)" {
		t.Error("Arch.String")
	}
	for r := StopEnd; r <= StopNoRoom; r++ {
		if strings.HasPrefix(r.String(), "StopReason(") {
			t.Errorf("StopReason %d has no name", r)
		}
		if r.Truncated() != (r != StopEnd) {
			t.Errorf("%v.Truncated() = %v", r, r.Truncated())
		}
	}
	if StopReason(200).String() != "StopReason(200)" {
		t.Error("StopReason(200).String")
	}
}

// TestWalkChain walks a clean 64-record chain on both architectures, ended
// by a zero saved FP.
func TestWalkChain(t *testing.T) {
	for _, arch := range arches {
		t.Run(arch.String(), func(t *testing.T) {
			s := newSynth(testBase, 4096)
			sp := uint64(testBase + 64)
			want := s.chain(sp+32, 64, 48, testRet)
			w := mustWalker(t, Config{Arch: arch})
			// LR equals the first record's return address: the function
			// has pushed its record, so LR must not be reported.
			regs := Regs{PC: testPC, SP: sp, FP: sp + 32, LR: testRet}
			got, res := w.Walk(regs, s.stack(), make([]uint64, 0, 512))
			checkWalk(t, got, res, cat([]uint64{testPC}, want), StopEnd)
			if res.FallbackReads != 0 || res.AsyncFrames != 0 {
				t.Errorf("result = %+v", res)
			}
		})
	}
}

func TestWalkStartGuards(t *testing.T) {
	s := newSynth(testBase, 1024)
	s.chain(testBase+256, 3, 32, testRet)
	st := s.stack()
	w := mustWalker(t, Config{Arch: ArchAMD64})

	got, res := w.Walk(Regs{PC: 0, SP: testBase, FP: testBase + 256}, st, make([]uint64, 0, 8))
	checkWalk(t, got, res, []uint64{}, StopEnd)

	for _, tc := range []struct {
		name string
		regs Regs
		stop StopReason
	}{
		{"fp zero", Regs{PC: testPC, SP: testBase, FP: 0}, StopEnd},
		{"fp misaligned", Regs{PC: testPC, SP: testBase, FP: testBase + 257}, StopMisaligned},
		{"fp misaligned by 4", Regs{PC: testPC, SP: testBase, FP: testBase + 260}, StopMisaligned},
		{"fp below Lo", Regs{PC: testPC, SP: 0, FP: testBase - 16}, StopOutOfStack},
		{"fp below SP", Regs{PC: testPC, SP: testBase + 264, FP: testBase + 256}, StopOutOfStack},
		{"fp at Hi", Regs{PC: testPC, SP: testBase, FP: testBase + 1024}, StopOutOfStack},
		{"record straddles Hi", Regs{PC: testPC, SP: testBase, FP: testBase + 1024 - 8}, StopOutOfStack},
		{"fp far above", Regs{PC: testPC, SP: testBase, FP: 0x7fff_ffff_0000}, StopOutOfStack},
	} {
		got, res := w.Walk(tc.regs, st, make([]uint64, 0, 8))
		checkHash(t, got, res)
		if !slices.Equal(got, []uint64{testPC}) || res.Stop != tc.stop {
			t.Errorf("%s: got %#x %v, want [PC] %v", tc.name, got, res.Stop, tc.stop)
		}
	}
	// The last record that fits: fp = Hi-16.
	s.put(testBase+1024-16, 0, testRet+7)
	got, res = w.Walk(Regs{PC: testPC, SP: testBase, FP: testBase + 1024 - 16}, st, make([]uint64, 0, 8))
	checkWalk(t, got, res, []uint64{testPC, testRet + 7}, StopEnd)
	// FP == SP is allowed (push rbp; mov rbp, rsp).
	got, res = w.Walk(Regs{PC: testPC, SP: testBase + 256, FP: testBase + 256}, st, make([]uint64, 0, 8))
	checkWalk(t, got, res, []uint64{testPC, testRet, testRet + 1, testRet + 2}, StopEnd)
}

// TestWalkMidChainGuards breaks the second link of a chain in every way a
// saved frame pointer can be bad.
func TestWalkMidChainGuards(t *testing.T) {
	const fp0 = testBase + 512
	for _, arch := range arches {
		for _, tc := range []struct {
			name string
			next uint64 // saved FP in the first record
			stop StopReason
		}{
			{"zero", 0, StopEnd},
			{"misaligned", fp0 + 33, StopMisaligned},
			{"self loop", fp0, StopNotIncreasing},
			{"decreasing", fp0 - 64, StopNotIncreasing},
			{"overlapping record", fp0 + 8, StopNotIncreasing},
			{"below Lo", testBase - 4096, StopOutOfStack},
			{"above Hi", testBase + 8192, StopOutOfStack},
			{"near 2^64", ^uint64(0) &^ 7, StopOutOfStack},
			{"2^64-16", ^uint64(0) - 15, StopOutOfStack},
			{"high bits not async", 0x2<<60 | (fp0 + 32), StopOutOfStack},
		} {
			t.Run(arch.String()+"/"+tc.name, func(t *testing.T) {
				s := newSynth(testBase, 2048)
				s.put(fp0, tc.next, testRet)
				if tc.next >= fp0+16 && tc.next < testBase+2048-16 {
					s.put(tc.next, 0, testRet+1) // would be valid if reached
				}
				w := mustWalker(t, Config{Arch: arch})
				got, res := w.Walk(Regs{PC: testPC, SP: testBase, FP: fp0, LR: testRet}, s.stack(), make([]uint64, 0, 16))
				checkWalk(t, got, res, []uint64{testPC, testRet}, tc.stop)
			})
		}
	}
}

// TestWalkTwoRecordLoop: A -> B -> A. The walk reports A and B once each and
// stops when B points back down to A.
func TestWalkTwoRecordLoop(t *testing.T) {
	s := newSynth(testBase, 1024)
	a, b := uint64(testBase+128), uint64(testBase+256)
	s.put(a, b, testRet)
	s.put(b, a, testRet+1)
	w := mustWalker(t, Config{Arch: ArchAMD64})
	got, res := w.Walk(Regs{PC: testPC, SP: testBase, FP: a}, s.stack(), make([]uint64, 0, 512))
	checkWalk(t, got, res, []uint64{testPC, testRet, testRet + 1}, StopNotIncreasing)
}

func TestWalkReturnAddressZeroEnds(t *testing.T) {
	s := newSynth(testBase, 1024)
	want := s.chain(testBase+64, 5, 32, testRet)
	// Third record: non-zero saved FP but a zero return address.
	s.put(testBase+64+64, testBase+64+96, 0)
	w := mustWalker(t, Config{Arch: ArchAMD64})
	got, res := w.Walk(Regs{PC: testPC, SP: testBase, FP: testBase + 64}, s.stack(), make([]uint64, 0, 16))
	checkWalk(t, got, res, cat([]uint64{testPC}, want[:2]), StopEnd)
	// A zero return address that only has PAC bits set is zero too.
	s.put(testBase+64+64, testBase+64+96, 0x00ff_0000_0000_0000)
	w = mustWalker(t, Config{Arch: ArchAMD64, AddrMask: 1<<47 - 1})
	got, res = w.Walk(Regs{PC: testPC, SP: testBase, FP: testBase + 64}, s.stack(), make([]uint64, 0, 16))
	checkWalk(t, got, res, cat([]uint64{testPC}, want[:2]), StopEnd)
}

func TestWalkFrameLimit(t *testing.T) {
	for _, tc := range []struct {
		max, records int
		wantLen      int
		stop         StopReason
	}{
		{max: 1, records: 3, wantLen: 1, stop: StopMaxFrames},
		{max: 10, records: 20, wantLen: 10, stop: StopMaxFrames},
		{max: 10, records: 9, wantLen: 10, stop: StopEnd}, // PC + 9 = exactly the limit
		{max: 10, records: 10, wantLen: 10, stop: StopMaxFrames},
		{max: 0, records: 600, wantLen: DefaultMaxFrames, stop: StopMaxFrames},
		{max: 0, records: 511, wantLen: DefaultMaxFrames, stop: StopEnd},
		{max: MaxMaxFrames, records: MaxMaxFrames + 5, wantLen: MaxMaxFrames, stop: StopMaxFrames},
		{max: MaxMaxFrames, records: MaxMaxFrames - 1, wantLen: MaxMaxFrames, stop: StopEnd},
	} {
		for _, arch := range arches {
			t.Run(fmt.Sprintf("%v/max%d/records%d", arch, tc.max, tc.records), func(t *testing.T) {
				s := newSynth(testBase, 16*(tc.records+2))
				want := s.chain(testBase+16, tc.records, 16, testRet)
				w := mustWalker(t, Config{Arch: arch, MaxFrames: tc.max})
				dst := make([]uint64, 0, MaxMaxFrames+10)
				got, res := w.Walk(Regs{PC: testPC, SP: testBase, FP: testBase + 16, LR: testRet}, s.stack(), dst)
				checkWalk(t, got, res, cat([]uint64{testPC}, want)[:tc.wantLen], tc.stop)
			})
		}
	}
}

func TestWalkNoRoom(t *testing.T) {
	s := newSynth(testBase, 4096)
	want := cat([]uint64{testPC}, s.chain(testBase+16, 100, 32, testRet))
	for _, arch := range arches {
		w := mustWalker(t, Config{Arch: arch})
		for _, c := range []int{0, 1, 2, 50, 100} {
			dst := make([]uint64, min(3, c), c) // Walk starts from dst[:0]
			got, res := w.Walk(Regs{PC: testPC, SP: testBase, FP: testBase + 16, LR: testRet}, s.stack(), dst)
			checkWalk(t, got, res, want[:c], StopNoRoom)
			if c > 0 && &got[:1][0] != &dst[:1][0] {
				t.Errorf("cap %d: Walk reallocated dst", c)
			}
		}
		// Room for exactly the whole stack: the chain's end wins.
		got, res := w.Walk(Regs{PC: testPC, SP: testBase, FP: testBase + 16, LR: testRet}, s.stack(), make([]uint64, 0, 101))
		checkWalk(t, got, res, want, StopEnd)
	}
}

// fakeMem serves reads from a synthetic stack and records every read, so
// tests can check the walker never asks for memory outside the bounds.
type fakeMem struct {
	s      *synth
	fail   bool
	reads  []uint64
	lo, hi uint64
	t      testing.TB
}

var errFake = errors.New("fake read failure")

func (m *fakeMem) ReadMemory(addr uint64, dst []byte) error {
	m.reads = append(m.reads, addr)
	if addr < m.lo || addr+uint64(len(dst)) > m.hi || addr+uint64(len(dst)) < addr {
		m.t.Errorf("fallback read [%#x, +%d) outside the stack bounds [%#x, %#x)", addr, len(dst), m.lo, m.hi)
	}
	if m.fail {
		return errFake
	}
	off := addr - m.s.base
	if off > uint64(len(m.s.mem)) || uint64(len(m.s.mem))-off < uint64(len(dst)) {
		return errFake
	}
	copy(dst, m.s.mem[off:])
	return nil
}

func TestWalkFallback(t *testing.T) {
	for _, arch := range arches {
		t.Run(arch.String(), func(t *testing.T) {
			s := newSynth(testBase, 4096)
			want := cat([]uint64{testPC}, s.chain(testBase+64, 40, 64, testRet))
			st := s.stack()
			// The bulk copy covers [Base+32, Base+32+1000): records 0..14
			// lie inside (the one at 64+14*64=960 ends at 976 < 1032), the
			// 15th straddles the copy's end, the rest lie above it.
			st.Base = testBase + 32
			st.Data = s.mem[32 : 32+1000]
			mem := &fakeMem{s: s, lo: st.Lo, hi: st.Hi, t: t}
			w := mustWalker(t, Config{Arch: arch, Fallback: mem})
			got, res := w.Walk(Regs{PC: testPC, SP: testBase + 32, FP: testBase + 64, LR: testRet}, st, make([]uint64, 0, 64))
			checkWalk(t, got, res, want, StopEnd)
			if res.FallbackReads != 25 || len(mem.reads) != 25 {
				t.Errorf("fallback reads = %d (reader saw %d), want 25", res.FallbackReads, len(mem.reads))
			}
			if mem.reads[0] != testBase+64+15*64 {
				t.Errorf("first fallback read at %#x, want the straddling record %#x", mem.reads[0], testBase+64+15*64)
			}

			// The reader fails: the walk keeps what it has.
			mem = &fakeMem{s: s, lo: st.Lo, hi: st.Hi, t: t, fail: true}
			w = mustWalker(t, Config{Arch: arch, Fallback: mem})
			got, res = w.Walk(Regs{PC: testPC, SP: testBase + 32, FP: testBase + 64, LR: testRet}, st, make([]uint64, 0, 64))
			checkWalk(t, got, res, want[:16], StopReadFailed)
			if res.FallbackReads != 1 {
				t.Errorf("fallback reads = %d, want 1", res.FallbackReads)
			}

			// No reader at all.
			w = mustWalker(t, Config{Arch: arch})
			got, res = w.Walk(Regs{PC: testPC, SP: testBase + 32, FP: testBase + 64, LR: testRet}, st, make([]uint64, 0, 64))
			checkWalk(t, got, res, want[:16], StopReadFailed)

			// An empty bulk copy: everything through the reader.
			st.Data = nil
			mem = &fakeMem{s: s, lo: st.Lo, hi: st.Hi, t: t}
			w = mustWalker(t, Config{Arch: arch, Fallback: mem})
			got, res = w.Walk(Regs{PC: testPC, SP: testBase + 32, FP: testBase + 64, LR: testRet}, st, make([]uint64, 0, 64))
			checkWalk(t, got, res, want, StopEnd)
			if res.FallbackReads != 40 {
				t.Errorf("fallback reads = %d, want 40", res.FallbackReads)
			}
		})
	}
}

// TestWalkCopyBelowBounds: the bulk copy may start below Lo (a backend
// that copies whole pages); records there are still rejected.
func TestWalkCopyBelowBounds(t *testing.T) {
	s := newSynth(testBase, 1024)
	s.put(testBase+64, testBase+128, testRet)
	s.put(testBase+128, 0, testRet+1)
	st := s.stack()
	st.Lo = testBase + 100
	w := mustWalker(t, Config{Arch: ArchAMD64})
	got, res := w.Walk(Regs{PC: testPC, SP: 0, FP: testBase + 64}, st, make([]uint64, 0, 8))
	checkWalk(t, got, res, []uint64{testPC}, StopOutOfStack)
	got, res = w.Walk(Regs{PC: testPC, SP: 0, FP: testBase + 128}, st, make([]uint64, 0, 8))
	checkWalk(t, got, res, []uint64{testPC, testRet + 1}, StopEnd)
}

func TestWalkPAC(t *testing.T) {
	const mask = 1<<47 - 1
	const pac = 0x002a_8000_0000_0000 // bits above 47
	s := newSynth(testBase, 1024)
	s.put(testBase+64, testBase+128, pac|testRet)
	s.put(testBase+128, 0, 0x0055_0000_0000_0000|(testRet+1))
	for _, arch := range arches {
		w := mustWalker(t, Config{Arch: arch, AddrMask: mask})
		// LR carries a different signature than the saved copy of the same
		// return address: after stripping they are equal, so the caller
		// is reported once.
		got, res := w.Walk(Regs{PC: 0x0011_0000_0000_0000 | testPC, SP: testBase, FP: testBase + 64, LR: 0x0077_0000_0000_0000 | testRet}, s.stack(), make([]uint64, 0, 8))
		checkWalk(t, got, res, []uint64{testPC, testRet, testRet + 1}, StopEnd)
	}
	// arm64 leaf: a signed LR that differs from the first record is
	// reported, stripped.
	w := mustWalker(t, Config{Arch: ArchARM64, AddrMask: mask})
	got, res := w.Walk(Regs{PC: pac | testPC, SP: testBase, FP: testBase + 64, LR: pac | (testPC + 0x40)}, s.stack(), make([]uint64, 0, 8))
	checkWalk(t, got, res, []uint64{testPC, testPC + 0x40, testRet, testRet + 1}, StopEnd)
	// Without a mask, addresses are returned as read.
	w = mustWalker(t, Config{Arch: ArchAMD64})
	got, res = w.Walk(Regs{PC: pac | testPC, SP: testBase, FP: testBase + 64}, s.stack(), make([]uint64, 0, 8))
	checkHash(t, got, res)
	if got[0] != pac|testPC || got[1] != pac|testRet {
		t.Errorf("unmasked walk = %#x", got)
	}
}

// TestWalkSwiftAsync: a saved FP with bits 63:60 == 0b0001 marks a Swift
// async frame record; the flag is cleared and the walk continues.
func TestWalkSwiftAsync(t *testing.T) {
	const async = uint64(1) << 60
	for _, arch := range arches {
		s := newSynth(testBase, 1024)
		s.put(testBase+64, async|(testBase+128), testRet)
		s.put(testBase+128, async|(testBase+256), testRet+1)
		s.put(testBase+256, testBase+512, testRet+2)
		s.put(testBase+512, 0, testRet+3)
		w := mustWalker(t, Config{Arch: arch, AddrMask: 1<<47 - 1})
		got, res := w.Walk(Regs{PC: testPC, SP: testBase, FP: testBase + 64, LR: testRet}, s.stack(), make([]uint64, 0, 8))
		checkWalk(t, got, res, []uint64{testPC, testRet, testRet + 1, testRet + 2, testRet + 3}, StopEnd)
		if res.AsyncFrames != 2 {
			t.Errorf("%v: AsyncFrames = %d, want 2", arch, res.AsyncFrames)
		}
		// The flag in the FP register itself (stopped between the prologue's
		// orr and stp) is handled too.
		got, res = w.Walk(Regs{PC: testPC, SP: testBase, FP: async | (testBase + 256), LR: testRet + 2}, s.stack(), make([]uint64, 0, 8))
		checkWalk(t, got, res, []uint64{testPC, testRet + 2, testRet + 3}, StopEnd)
		if res.AsyncFrames != 1 {
			t.Errorf("%v: AsyncFrames = %d, want 1", arch, res.AsyncFrames)
		}
		// An async flag on a saved FP that is otherwise bad still stops.
		s.put(testBase+512, async|(testBase+64), testRet+3)
		got, res = w.Walk(Regs{PC: testPC, SP: testBase, FP: testBase + 256, LR: testRet + 2}, s.stack(), make([]uint64, 0, 8))
		checkWalk(t, got, res, []uint64{testPC, testRet + 2, testRet + 3}, StopNotIncreasing)
		// An async flag on zero is the end of the chain.
		s.put(testBase+512, async, testRet+3)
		got, res = w.Walk(Regs{PC: testPC, SP: testBase, FP: testBase + 256, LR: testRet + 2}, s.stack(), make([]uint64, 0, 8))
		checkHash(t, got, res)
		if res.Stop != StopEnd {
			t.Errorf("%v: async|0 stop = %v", arch, res.Stop)
		}
	}
}

// TestWalkARM64LR covers the arm64 rule for the caller held in LR.
func TestWalkARM64LR(t *testing.T) {
	const callerRet = testRet + 0x100 // return address into the caller
	s := newSynth(testBase, 1024)
	// The caller's record: its own caller's return address.
	s.put(testBase+256, testBase+512, testRet+1)
	s.put(testBase+512, 0, testRet+2)
	// A leaf that has pushed its record: [caller FP, callerRet].
	s.put(testBase+128, testBase+256, callerRet)
	st := s.stack()
	arm := mustWalker(t, Config{Arch: ArchARM64})
	amd := mustWalker(t, Config{Arch: ArchAMD64})
	for _, tc := range []struct {
		name string
		w    *Walker
		regs Regs
		cap  int
		want []uint64
		stop StopReason
	}{
		{"leaf without record", arm, Regs{PC: testPC, SP: testBase + 240, FP: testBase + 256, LR: callerRet}, 8,
			[]uint64{testPC, callerRet, testRet + 1, testRet + 2}, StopEnd},
		{"leaf with record", arm, Regs{PC: testPC, SP: testBase + 128, FP: testBase + 128, LR: callerRet}, 8,
			[]uint64{testPC, callerRet, testRet + 1, testRet + 2}, StopEnd},
		{"leaf, thread entry (FP zero)", arm, Regs{PC: testPC, SP: testBase + 128, FP: 0, LR: callerRet}, 8,
			[]uint64{testPC, callerRet}, StopEnd},
		{"LR zero", arm, Regs{PC: testPC, SP: testBase + 240, FP: testBase + 256, LR: 0}, 8,
			[]uint64{testPC, testRet + 1, testRet + 2}, StopEnd},
		{"first record misaligned", arm, Regs{PC: testPC, SP: testBase, FP: testBase + 252, LR: callerRet}, 8,
			[]uint64{testPC, callerRet}, StopMisaligned},
		{"first record out of stack", arm, Regs{PC: testPC, SP: testBase, FP: testBase + 4096, LR: callerRet}, 8,
			[]uint64{testPC, callerRet}, StopOutOfStack},
		{"LR but no room", arm, Regs{PC: testPC, SP: testBase + 240, FP: testBase + 256, LR: callerRet}, 1,
			[]uint64{testPC}, StopNoRoom},
		{"LR but no room, FP zero", arm, Regs{PC: testPC, SP: testBase + 240, FP: 0, LR: callerRet}, 1,
			[]uint64{testPC}, StopNoRoom},
		{"LR fills the last slot", arm, Regs{PC: testPC, SP: testBase + 240, FP: testBase + 256, LR: callerRet}, 2,
			[]uint64{testPC, callerRet}, StopNoRoom},
		{"first record ends the chain", arm, Regs{PC: testPC, SP: testBase + 500, FP: testBase + 512, LR: callerRet}, 8,
			[]uint64{testPC, callerRet, testRet + 2}, StopEnd},
		{"amd64 ignores LR", amd, Regs{PC: testPC, SP: testBase + 240, FP: testBase + 256, LR: callerRet}, 8,
			[]uint64{testPC, testRet + 1, testRet + 2}, StopEnd},
		// Go's arm64 prologue stores the record at SP-8: accepted on arm64,
		// not on amd64, and never further below SP.
		{"go arm64 record below SP", arm, Regs{PC: testPC, SP: testBase + 136, FP: testBase + 128, LR: callerRet}, 8,
			[]uint64{testPC, callerRet, testRet + 1, testRet + 2}, StopEnd},
		{"go arm64 record at SP-16", arm, Regs{PC: testPC, SP: testBase + 144, FP: testBase + 128, LR: callerRet}, 8,
			[]uint64{testPC, callerRet, testRet + 1, testRet + 2}, StopEnd},
		{"arm64 record 24 below SP", arm, Regs{PC: testPC, SP: testBase + 152, FP: testBase + 128, LR: callerRet}, 8,
			[]uint64{testPC, callerRet}, StopOutOfStack},
		{"amd64 record below SP", amd, Regs{PC: testPC, SP: testBase + 136, FP: testBase + 128}, 8,
			[]uint64{testPC}, StopOutOfStack},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, res := tc.w.Walk(tc.regs, st, make([]uint64, 0, tc.cap))
			checkWalk(t, got, res, tc.want, tc.stop)
		})
	}
	// A ret of zero in the first record: LR is still the caller.
	s.put(testBase+128, testBase+256, 0)
	got, res := arm.Walk(Regs{PC: testPC, SP: testBase + 128, FP: testBase + 128, LR: callerRet}, st, make([]uint64, 0, 8))
	checkWalk(t, got, res, []uint64{testPC, callerRet}, StopEnd)
	// The first record read through the fallback reader is read once.
	s.put(testBase+128, testBase+256, callerRet)
	st2 := *st
	st2.Data = nil
	mem := &fakeMem{s: s, lo: st.Lo, hi: st.Hi, t: t}
	w := mustWalker(t, Config{Arch: ArchARM64, Fallback: mem})
	got, res = w.Walk(Regs{PC: testPC, SP: testBase + 128, FP: testBase + 128, LR: callerRet}, &st2, make([]uint64, 0, 8))
	checkWalk(t, got, res, []uint64{testPC, callerRet, testRet + 1, testRet + 2}, StopEnd)
	if res.FallbackReads != 3 {
		t.Errorf("fallback reads = %d, want 3 (one per record)", res.FallbackReads)
	}
}

// TestWalkHostileBounds puts stacks and registers near the ends of the
// address space, where a careless fp+16 or base+len overflows.
func TestWalkHostileBounds(t *testing.T) {
	top := ^uint64(0) - 4095 // last page
	s := newSynth(top, 4096)
	s.put(top+64, top+4096-32, testRet)
	s.put(top+4096-32, ^uint64(0)-15, testRet+1) // next record would end at 2^64
	for _, arch := range arches {
		w := mustWalker(t, Config{Arch: arch, Fallback: &fakeMem{s: s, lo: top, hi: ^uint64(0), t: t}})
		st := &Stack{Base: top, Data: s.mem, Lo: top, Hi: ^uint64(0)}
		got, res := w.Walk(Regs{PC: testPC, SP: top, FP: top + 64, LR: testRet}, st, make([]uint64, 0, 8))
		checkWalk(t, got, res, []uint64{testPC, testRet, testRet + 1}, StopOutOfStack)
		for _, regs := range []Regs{
			{PC: testPC, SP: ^uint64(0), FP: ^uint64(0) &^ 7},
			{PC: testPC, SP: ^uint64(0) - 7, FP: ^uint64(0) - 7},
			{PC: testPC, SP: 0, FP: ^uint64(0) - 15},
			{PC: testPC, SP: 8, FP: 8}, // arm64: SP-16 underflows
		} {
			got, res := w.Walk(regs, st, make([]uint64, 0, 8))
			checkHash(t, got, res)
			if got[0] != testPC || len(got) > 1 && arch == ArchAMD64 {
				t.Errorf("%v %+v: %#x", arch, regs, got)
			}
		}
		// Hi below 16: no record fits.
		got, res = w.Walk(Regs{PC: testPC, SP: 0, FP: 8}, &Stack{Lo: 0, Hi: 15, Data: make([]byte, 16)}, make([]uint64, 0, 8))
		checkWalk(t, got, res, []uint64{testPC}, StopOutOfStack)
		// Lo above Hi: nothing is inside.
		got, res = w.Walk(Regs{PC: testPC, SP: 0, FP: top + 64}, &Stack{Base: top, Data: s.mem, Lo: top + 2048, Hi: top + 1024}, make([]uint64, 0, 8))
		checkWalk(t, got, res, []uint64{testPC}, StopOutOfStack)
		// Base+len(Data) wraps past 2^64: the copy is used only where valid.
		wrap := &Stack{Base: ^uint64(0) - 63, Data: make([]byte, 4096), Lo: ^uint64(0) - 63, Hi: ^uint64(0)}
		binary.LittleEndian.PutUint64(wrap.Data[16:], 0)
		binary.LittleEndian.PutUint64(wrap.Data[24:], testRet)
		got, res = mustWalker(t, Config{Arch: arch}).Walk(Regs{PC: testPC, SP: 0, FP: ^uint64(0) - 47}, wrap, make([]uint64, 0, 8))
		checkWalk(t, got, res, []uint64{testPC, testRet}, StopEnd)
		// A Base above the record: read through the fallback (none here).
		got, res = mustWalker(t, Config{Arch: arch}).Walk(Regs{PC: testPC, SP: 0, FP: top + 64}, &Stack{Base: top + 128, Data: s.mem[:64], Lo: top, Hi: ^uint64(0)}, make([]uint64, 0, 8))
		checkHash(t, got, res)
		if arch == ArchAMD64 {
			checkWalk(t, got, res, []uint64{testPC}, StopReadFailed)
		}
	}
}

// TestWalkConcurrent shares one Walker between goroutines (run with -race).
func TestWalkConcurrent(t *testing.T) {
	s := newSynth(testBase, 4096)
	want := cat([]uint64{testPC}, s.chain(testBase+64, 64, 48, testRet))
	w := mustWalker(t, Config{Arch: ArchARM64})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]uint64, 0, 512)
			for i := 0; i < 200; i++ {
				got, res := w.Walk(Regs{PC: testPC, SP: testBase, FP: testBase + 64, LR: testRet}, s.stack(), dst)
				if !slices.Equal(got, want) || res.Stop != StopEnd || res.Hash != HashPCs(want) {
					t.Errorf("concurrent walk = %v %v", len(got), res.Stop)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// benchStack builds a 64-frame stack (PC + 63 return addresses) the way a
// thread's stack looks: records 48..160 bytes apart.
func benchStack() (*Stack, Regs, int) {
	s := newSynth(testBase, 16<<10)
	fp := uint64(testBase + 256)
	regs := Regs{PC: testPC, SP: testBase + 200, FP: fp, LR: testRet}
	for i := 0; i < 63; i++ {
		next := fp + 48 + uint64(i%8)*16
		if i == 62 {
			next = 0
		}
		s.put(fp, next, testRet+uint64(i)*4)
		fp = next
	}
	return s.stack(), regs, 64
}

func TestWalkAllocs(t *testing.T) {
	st, regs, n := benchStack()
	for _, arch := range arches {
		mem := &fakeMem{s: &synth{base: st.Base, mem: st.Data}, lo: st.Lo, hi: st.Hi, t: t, reads: make([]uint64, 0, 1<<14)}
		w := mustWalker(t, Config{Arch: arch, AddrMask: 1<<47 - 1, Fallback: mem})
		dst := make([]uint64, 0, 512)
		// Half the stack through the fallback, to cover that path too.
		half := *st
		half.Data = st.Data[:len(st.Data)/8]
		for _, stk := range []*Stack{st, &half} {
			var got []uint64
			var res Result
			allocs := testing.AllocsPerRun(100, func() {
				got, res = w.Walk(regs, stk, dst)
			})
			checkHash(t, got, res)
			if allocs != 0 {
				t.Errorf("%v: Walk allocates %.1f times per run", arch, allocs)
			}
			if len(got) != n {
				t.Errorf("%v: %d frames, want %d", arch, len(got), n)
			}
			mem.reads = mem.reads[:0]
		}
	}
}

func BenchmarkWalk(b *testing.B) {
	st, regs, n := benchStack()
	for _, arch := range arches {
		b.Run(arch.String(), func(b *testing.B) {
			w := mustWalker(b, Config{Arch: arch, AddrMask: 1<<47 - 1})
			dst := make([]uint64, 0, DefaultMaxFrames)
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = w.Walk(regs, st, dst)
			}
			if len(dst) != n {
				b.Fatalf("%d frames, want %d", len(dst), n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/frame")
		})
	}
}

// barrierMem serves reads from a synthetic stack; each read waits until n
// readers are inside ReadMemory at once, so that more walks hold fallback
// buffers at the same time than the walker keeps preallocated.
type barrierMem struct {
	s       *synth
	n       int64
	count   atomic.Int64
	arrived chan struct{}
	release chan struct{}
}

func (m *barrierMem) ReadMemory(addr uint64, dst []byte) error {
	// The first n reads are the first read of each walk: each blocks.
	if m.count.Add(1) <= m.n {
		m.arrived <- struct{}{}
		<-m.release
	}
	copy(dst, m.s.mem[addr-m.s.base:])
	return nil
}

func TestWalkConcurrentFallback(t *testing.T) {
	s := newSynth(testBase, 4096)
	want := cat([]uint64{testPC}, s.chain(testBase+64, 20, 48, testRet))
	st := s.stack()
	st.Data = nil // every record through the fallback
	const walkers = len(recordBufs) + 4
	mem := &barrierMem{s: s, n: int64(walkers), arrived: make(chan struct{}, walkers), release: make(chan struct{})}
	w := mustWalker(t, Config{Arch: ArchAMD64, Fallback: mem})
	var wg sync.WaitGroup
	for g := 0; g < walkers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, res := w.Walk(Regs{PC: testPC, SP: testBase, FP: testBase + 64}, st, make([]uint64, 0, 64))
			if !slices.Equal(got, want) || res.Stop != StopEnd || res.Hash != HashPCs(want) {
				t.Errorf("walk = %#x %v", got, res.Stop)
			}
		}()
	}
	// All walkers are inside their first fallback read at once.
	for g := 0; g < walkers; g++ {
		<-mem.arrived
	}
	close(mem.release)
	wg.Wait()
}
