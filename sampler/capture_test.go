package sampler

import (
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/intern"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
	"github.com/macprof/macprof/unwind"
)

// walkingTarget captures like a backend does: it lays its thread's stack
// out as frame records in memory and walks them with an unwind.Walker, so
// that Capture.Walk carries the walk's hash.
type walkingTarget struct {
	*targettest.Fake
	walker *unwind.Walker
}

func (w *walkingTarget) Capture(tid target.ThreadID, c *target.Capture) error {
	pcs := w.Thread(tid).Stack
	const base = 0x7ff0_0000_0000
	mem := make([]byte, 64+16*len(pcs))
	fp := uint64(base + 64)
	for i, ret := range pcs[1:] {
		next := fp + 16
		if i == len(pcs)-2 {
			next = 0
		}
		binary.LittleEndian.PutUint64(mem[fp-base:], next)
		binary.LittleEndian.PutUint64(mem[fp-base+8:], ret)
		fp = next
	}
	st := unwind.Stack{Base: base, Data: mem, Lo: base, Hi: base + uint64(len(mem))}
	c.PCs, c.Walk = w.walker.Walk(unwind.Regs{PC: pcs[0], SP: base, FP: base + 64}, &st, c.PCs)
	return nil
}

// captureOnce runs captureBatch for the given threads of ts and returns
// the stack each was interned as.
func captureOnce(s *Sampler, ts *targetState, tids ...target.ThreadID) []intern.StackID {
	s.batchIDs, s.batchN, s.batchState = s.batchIDs[:0], s.batchN[:0], s.batchState[:0]
	for _, tid := range tids {
		th := &threadState{}
		ts.threads[tid] = th
		s.batchIDs = append(s.batchIDs, tid)
		s.batchN = append(s.batchN, 1)
		s.batchState = append(s.batchState, th)
	}
	s.captureBatch(ts)
	ids := make([]intern.StackID, len(tids))
	for i, th := range s.batchState {
		ids[i] = th.lastStack
	}
	return ids
}

// TestCaptureBatchInterns: stacks captured by a backend that walks (with
// the walk's hash) and by one that fills PCs only (hashed by the sampler)
// are interned alike: one ID for one stack, whichever backend captured
// it, in whichever order, through the same reused Capture buffers.
func TestCaptureBatchInterns(t *testing.T) {
	a := []uint64{0x401000, 0x402000, 0x403000, 0x404000}
	b := []uint64{0x401000, 0x402000, 0x403000, 0x404004}
	c := []uint64{0x401000, 0x402000, 0x403000}
	walker, err := unwind.NewWalker(unwind.Config{Arch: unwind.ArchAMD64})
	if err != nil {
		t.Fatal(err)
	}
	threads := map[target.ThreadID]*targettest.Thread{1: {Stack: a}, 2: {Stack: a}, 3: {Stack: b}, 4: {Stack: c}}
	walking := &walkingTarget{Fake: newFake(10, threads), walker: walker}
	plain := newFake(11, map[target.ThreadID]*targettest.Thread{1: {Stack: b}, 2: {Stack: a}, 3: {Stack: c}})
	s := tickable(t, Config{Hz: 100}, walking, plain)
	tw, tp := s.targets[0], s.targets[1]

	w1 := captureOnce(s, tw, 1, 2, 3)
	if s.batchCaps[0].Walk.Hash == 0 || s.batchCaps[0].Walk.Hash != unwind.HashPCs(a) {
		t.Fatalf("walked capture has hash %#x, want %#x", s.batchCaps[0].Walk.Hash, unwind.HashPCs(a))
	}
	// The same buffers, now filled without a walk: no hash of the walk
	// before may stay behind.
	p1 := captureOnce(s, tp, 1, 2, 3)
	if s.batchCaps[0].Walk.Hash != 0 {
		t.Fatalf("unwalked capture kept hash %#x", s.batchCaps[0].Walk.Hash)
	}
	w2 := captureOnce(s, tw, 4, 3, 1)
	idA, idB, idC := w1[0], w1[2], w2[0]
	if idA == 0 || idB == 0 || idC == 0 || idA == idB || idA == idC || idB == idC {
		t.Fatalf("stacks a, b, c interned as %d, %d, %d", idA, idB, idC)
	}
	for _, c := range []struct {
		name      string
		got, want intern.StackID
	}{
		{"a, walked again", w1[1], idA},
		{"b, not walked", p1[0], idB},
		{"a, not walked", p1[1], idA},
		{"c, not walked", p1[2], idC},
		{"b, walked after the unwalked capture", w2[1], idB},
		{"a, walked a third time", w2[2], idA},
	} {
		if c.got != c.want {
			t.Errorf("%s: id %d, want %d", c.name, c.got, c.want)
		}
	}
	if st := s.interns.Stats(); st.Misses != 3 || st.Hits != 6 || st.Collisions != 0 {
		t.Errorf("interner stats %+v, want 3 misses and 6 hits", st)
	}
	for id, want := range map[intern.StackID][]uint64{idA: a, idB: b, idC: c} {
		if pcs, _, ok := s.interns.Lookup(id); !ok || !slices.Equal(pcs, want) {
			t.Errorf("Lookup(%d) = %#x, want %#x", id, pcs, want)
		}
	}
}

func TestCPUModeCountsTimeWithoutANewKernelSampleOnTheLastStack(t *testing.T) {
	f := newFake(10, map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{1, 2, 3}, NoSampleEvery: 3},
	})
	ws := run(t, Config{Hz: 100}, time.Second, f)
	w := ws[0]
	// Every third capture finds no new sample: the first (no stack yet)
	// is missed; the others count on the stack captured before. So the
	// CPU time from first sight (the first tick's, not counted) to the
	// end is counted, all of it: about 99 samples in a second, fewer or
	// more as a loaded machine made the run's end late or early.
	used := f.CPUSeen(1)
	if c, want := countBy(w)[1], samplesFor(used, 10*time.Millisecond); c < want*85/100 || c > want+1 {
		t.Errorf("busy thread: %d samples for the %v of CPU from first sight to the end, want about %d", c, used, want)
	}
	if n := w.Missed[profile.MissNoKernelSample]; n != 1 {
		t.Errorf("missed for want of a sample: %d, want 1 (the first capture); missed %v", n, w.Missed)
	}
}

// TestStacksWalkedWithTablesAreMarked: a stack whose capture's walk used
// unwind tables is marked CFI in the window, the others not.
func TestStacksWalkedWithTablesAreMarked(t *testing.T) {
	f := newFake(1, map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{0x1000, 0x2000}, CFI: true},
		2: {Share: 1, Stack: []uint64{0x3000, 0x4000}},
	})
	s, err := New(Config{Hz: 100})
	if err != nil {
		t.Fatal(err)
	}
	s.Add(f)
	s.adopt()
	s.win = s.newWindow(time.Now())
	ts := s.targets[0]
	captureOnce(s, ts, 1, 2)
	w := &profile.Window{}
	s.addSamples(w, s.win)
	if len(w.Stacks) != 2 {
		t.Fatalf("%d stacks, want 2", len(w.Stacks))
	}
	for _, st := range w.Stacks {
		if want := st.PCs[0] == 0x1000; st.CFI != want {
			t.Errorf("stack %#x: CFI %v, want %v", st.PCs, st.CFI, want)
		}
	}
}
