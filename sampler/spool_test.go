package sampler

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// spoolOps feeds s one seeded sequence of what a run does to a window:
// captures of several threads on stacks drawn from a few dozen (some
// truncated, some walked with tables), samples counted again on a
// thread's last stack (a drain's CPU time without a sample, a capture
// with none newer), CPU time counted as unsampled, and threads settled.
func spoolOps(s *Sampler, seed uint64, ops int) {
	r := rand.New(rand.NewPCG(seed, 1))
	type thr struct {
		pid int
		tid target.ThreadID
		st  *threadState
	}
	var ths []thr
	for i := range 6 {
		ths = append(ths, thr{pid: 100 + i%2, tid: target.ThreadID(1000 + i), st: &threadState{name: "t" + string(rune('a'+i))}})
	}
	c := target.NewCapture(64, 0)
	for i := range ops {
		s.now = int64(i+1) * 1000 // a timeline's time, when kept
		th := ths[r.IntN(len(ths))]
		switch op := r.IntN(10); {
		case op < 6:
			// Stacks of a few dozen callers, some with leaves of
			// their own, as samples in one function are.
			stack := r.IntN(40)
			c.PCs = c.PCs[:0]
			for f := range 3 + stack%7 {
				c.PCs = append(c.PCs, uint64(0x1000*(stack+1)+f))
			}
			if stack%2 == 0 {
				c.PCs[0] += uint64(r.IntN(4)) << 8
			}
			// Outer frames many stacks share (a group's caller, the
			// thread's start), which the spool keeps once a run.
			c.PCs = append(c.PCs, 0xc000+uint64(stack%4), 0xa000, 0xb000)
			if stack == 39 {
				c.PCs = c.PCs[:0] // no frame at all
			}
			// Hashes as the walk makes them, but some stacks share one:
			// the spool's recent stacks must tell them apart too.
			c.Walk = unwind.Result{Stop: unwind.StopEnd, Hash: unwind.HashPCs(c.PCs)}
			if stack%7 == 0 {
				c.Walk.Hash = 42
			}
			if stack%5 == 0 {
				c.Walk.Stop = unwind.StopMaxFrames
			}
			if stack%3 == 0 {
				c.Walk.CFIFrames = 1
			}
			s.internAndCount(th.pid, th.tid, th.st, c, 1+int64(r.IntN(3)))
		case op < 8 && th.st.hasStack:
			s.count(th.pid, th.tid, th.st, th.st.lastStack, 1+int64(r.IntN(4)))
		case op < 9:
			s.count(th.pid, unseenThread, &s.unseenState, unsampledStack, 1)
		default:
			if th.st.hasStack {
				s.count(th.pid, th.tid, th.st, th.st.lastStack, 1)
			}
			th.st.hasStack = false // settled and gone; its tid comes back as a new thread
			th.st.lastStack = 0
		}
	}
}

// TestSpoolCountsAsInterningAtOnce: a window whose samples waited in the
// spool, flushed at its close or many times over when it is small, equals
// the window of the same samples interned at once, stacks, counts, thread
// names, the marks of truncated and table-walked stacks and the stacks the
// interner evicted included.
func TestSpoolCountsAsInterningAtOnce(t *testing.T) {
	for _, maxStacks := range []int{1 << 10, 8} {
		for _, limit := range []int{0, 1 << 20, 300} {
			for seed := range uint64(6) {
				timeline := int(seed%2) << 20
				window := func(spoolBytes int) *profile.Window {
					s, err := New(Config{Hz: 100, MaxStacks: maxStacks, SpoolBytes: spoolBytes, Timeline: timeline})
					if err != nil {
						t.Fatal(err)
					}
					var w *profile.Window
					s.cfg.OnWindow = func(x *profile.Window) { w = x }
					start := time.Unix(1, 0)
					s.win = s.newWindow(start)
					spoolOps(s, seed, 2000)
					if spoolBytes > 0 && s.total == 0 {
						t.Fatal("nothing counted")
					}
					s.closeWindow(start.Add(time.Second))
					w.Stats = profile.Stats{}
					return w
				}
				want, got := window(0), window(limit)
				if timeline > 0 && len(want.Timeline) == 0 {
					t.Fatal("no timeline kept")
				}
				// A timeline lists samples in the order they were
				// counted, spooled ones after those counted at once
				// (unsampled, lost): the same entries, in time order.
				for _, w := range []*profile.Window{want, got} {
					slices.SortStableFunc(w.Timeline, func(a, b profile.TimedSample) int {
						return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Sample, b.Sample), cmp.Compare(a.Count, b.Count))
					})
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("stacks %d, spool %d bytes, seed %d: the spooled window differs:\n got %d stacks, %d samples, missed %v\nwant %d stacks, %d samples, missed %v",
						maxStacks, limit, seed, len(got.Stacks), len(got.Samples), got.Missed, len(want.Stacks), len(want.Samples), want.Missed)
				}
			}
		}
	}
}

// TestSpoolKeepsItsMemory: once the spool has grown, spooling and
// flushing allocate nothing.
func TestSpoolKeepsItsMemory(t *testing.T) {
	for _, timeline := range []int{0, 1 << 20} {
		t.Run(fmt.Sprint("timeline=", timeline), func(t *testing.T) { testSpoolKeepsItsMemory(t, timeline) })
	}
}

func testSpoolKeepsItsMemory(t *testing.T, timeline int) {
	s, err := New(Config{Hz: 100, SpoolBytes: 1 << 20, Timeline: timeline})
	if err != nil {
		t.Fatal(err)
	}
	s.win = s.newWindow(time.Now())
	th := &threadState{name: "w"}
	c := target.NewCapture(64, 0)
	c.PCs = append(c.PCs, 1, 2, 3, 4)
	c.Walk.Hash = unwind.HashPCs(c.PCs)
	run := func() {
		for range 100 {
			s.internAndCount(1, 2, th, c, 1)
			s.count(1, 2, th, th.lastStack, 1)
		}
		s.flushSpool()
	}
	run()
	if n := testing.AllocsPerRun(50, run); n != 0 {
		t.Errorf("%v allocations per 100 spooled samples and a flush, want 0", n)
	}
	if th.lastStack == spooledStack || !th.hasStack {
		t.Errorf("after the flush the thread's last stack is %v", th.lastStack)
	}
}

// TestSpoolStacksKeepEachStack: stacks of every length, a chunk's worth
// and more included, come back from their places as they were appended,
// across chunk boundaries and a reset, which keeps the warm chunks and
// fills them again first.
func TestSpoolStacksKeepEachStack(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var st spoolStacks
	st.warmUp(3 * 8 * spoolStackChunk)
	if len(st.chunks) != 3 || st.warm != 3 {
		t.Fatalf("warmUp made %d chunks (%d warm), want 3", len(st.chunks), st.warm)
	}
	warm := make([]*uint64, 3)
	for i, c := range st.chunks {
		warm[i] = &c[:1][0]
	}
	for round := range 2 {
		type kept struct {
			place uint32
			pcs   []uint64
		}
		var all []kept
		for i := range 3000 {
			n := r.IntN(300)
			switch i % 500 {
			case 7:
				n = spoolStackChunk - 1 // fills a chunk exactly
			case 8:
				n = spoolStackChunk + 100 // more than a chunk
			case 9:
				n = 0
			}
			pcs := make([]uint64, n)
			for j := range pcs {
				pcs[j] = r.Uint64()
			}
			place, ok := st.add(pcs, i%3)
			if !ok {
				t.Fatalf("round %d: stack %d of %d addresses not kept", round, i, n)
			}
			if place&^spoolStackMask != 0 || place == spoolRepeat {
				t.Fatalf("round %d: stack %d at place %#x, which a spooled entry cannot hold", round, i, place)
			}
			all = append(all, kept{place, pcs})
		}
		for i, k := range all {
			if got, shared := st.stack(k.place); !slices.Equal(got, k.pcs) || shared != i%3 {
				t.Fatalf("round %d: stack %d (%d addresses) at %#x comes back as %d addresses", round, i, len(k.pcs), k.place, len(got))
			}
		}
		if len(st.chunks) <= 3 {
			t.Fatalf("round %d: %d chunks for 3000 stacks", round, len(st.chunks))
		}
		st.reset()
		if len(st.chunks) != 3 || st.fill != 0 {
			t.Fatalf("round %d: a reset left %d chunks, filling %d", round, len(st.chunks), st.fill)
		}
		for i, c := range st.chunks {
			if len(c) != 0 || &c[:1][0] != warm[i] {
				t.Fatalf("round %d: warm chunk %d not kept empty", round, i)
			}
		}
	}
}

// TestSpoolWarmsUpBeforeUse: a new spool has its first stacks' and
// entries' memory already, so that its first samples (bench/cbusy's 5 s at
// 999 Hz) allocate nothing; a spool of a small limit warms only that much.
func TestSpoolWarmsUpBeforeUse(t *testing.T) {
	s, err := New(Config{Hz: 100, SpoolBytes: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	s.win = s.newWindow(time.Now())
	th := &threadState{name: "w"}
	c := target.NewCapture(64, 0)
	r := rand.New(rand.NewPCG(7, 8))
	stacks := make([][]uint64, 64)
	for i := range stacks {
		for range 10 + r.IntN(10) {
			stacks[i] = append(stacks[i], r.Uint64())
		}
	}
	i := 0
	spool := func() {
		c.PCs = append(c.PCs[:0], stacks[i%len(stacks)]...)
		c.Walk.Hash = unwind.HashPCs(c.PCs)
		s.internAndCount(1, 2, th, c, 1)
		i++
	}
	spool() // the thread's entry in the spool's threads
	// At most 20 words and an entry a sample: 5,000 samples (5 s of two
	// threads at 500 Hz) fit in the warm memory.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 5000 {
		spool()
	}
	runtime.ReadMemStats(&after)
	if n := after.Mallocs - before.Mallocs; n != 0 {
		t.Errorf("%d allocations for 5,000 samples in a new spool, want 0", n)
	}
	if s.spool.bytes == 0 || s.spool.stacks.fill >= s.spool.stacks.warm {
		t.Errorf("%d bytes spooled, filling chunk %d of %d warm", s.spool.bytes, s.spool.stacks.fill, s.spool.stacks.warm)
	}
	small, err := New(Config{Hz: 100, SpoolBytes: 300})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(small.spool.stacks.chunks); n != 0 {
		t.Errorf("a spool of 300 bytes warmed %d chunks of stacks", n)
	}
}

// BenchmarkSpoolStack spools samples of two threads whose stacks are 16
// frames of a merge sort's recursion (two call sites a level, 8 levels)
// under the same outer callers, with one of 8 leaves, taking turns, as
// bench/cbusy's workers are drained; flushed every 64 Ki samples.
func BenchmarkSpoolStack(b *testing.B) {
	s, err := New(Config{Hz: 100, SpoolBytes: 16 << 20})
	if err != nil {
		b.Fatal(err)
	}
	s.win = s.newWindow(time.Now())
	ths := []*threadState{{name: "a"}, {name: "b"}}
	var stacks [][]uint64
	r := rand.New(rand.NewPCG(1, 2))
	for range 4096 {
		pcs := []uint64{0x9000 + uint64(r.IntN(8))}
		for lvl := range 8 {
			pcs = append(pcs, 0x100*uint64(lvl+1)+uint64(r.IntN(2)))
		}
		pcs = append(pcs, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80)
		stacks = append(stacks, pcs)
	}
	hashes := make([]uint64, len(stacks))
	for i, st := range stacks {
		hashes[i] = unwind.HashPCs(st)
	}
	c := target.NewCapture(64, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		j := i % len(stacks)
		c.PCs = append(c.PCs[:0], stacks[j]...)
		c.Walk.Hash = hashes[j]
		s.internAndCount(1, target.ThreadID(10+i%2), ths[i%2], c, 1)
		if i%(64<<10) == 0 {
			s.flushSpool()
		}
	}
}
