package sampler

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
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

// TestSpoolKeepsSharedCallersOnce: samples whose stacks share callers
// (samples in one function, or in a recursion whose middle frames differ,
// as a merge sort's) add to the spool only the frames no stack spooled
// before had under the same callers; the window holds each stack as it
// was.
func TestSpoolKeepsSharedCallersOnce(t *testing.T) {
	s, err := New(Config{Hz: 100, SpoolBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1, 0)
	s.win = s.newWindow(start)
	th := &threadState{name: "w"}
	c := target.NewCapture(64, 0)
	var want [][]uint64
	spool := func(pcs ...uint64) {
		c.PCs = append(c.PCs[:0], pcs...)
		c.Walk.Hash = unwind.HashPCs(c.PCs)
		s.internAndCount(1, 2, th, c, 1)
		if !slices.ContainsFunc(want, func(w []uint64) bool { return slices.Equal(w, pcs) }) {
			want = append(want, slices.Clone(pcs))
		}
	}
	for i := range 100 {
		spool(0x100+uint64(i%10), 2, 3, 4)
	}
	spool(0x100, 6, 7, 8)
	spool(0x101, 2, 3, 4)
	// A recursion: two call sites (0x20, 0x21) at each of 3 levels
	// between a leaf and the same outer callers.
	for i := range 64 {
		pcs := []uint64{0x300 + uint64(i%4)}
		for lvl := range 3 {
			pcs = append(pcs, 0x20+uint64(i>>(2+lvl)&1))
		}
		spool(append(pcs, 9, 4)...)
	}
	s.count(1, 2, th, th.lastStack, 5) // a repeat of the last stack
	// 4, 3, 2 and 10 leaves; 8, 7, 6 and a leaf; 9 under 4, 2+4+8 frames
	// of the recursion, 4 leaves under each of its 8 paths.
	if got, want := int(s.spool.tree.n)-1, 3+10+4+1+14+32; got != want {
		t.Fatalf("%d addresses kept in the spool, want %d", got, want)
	}
	var w *profile.Window
	s.cfg.OnWindow = func(x *profile.Window) { w = x }
	s.closeWindow(start.Add(time.Second))
	if len(w.Stacks) != len(want) {
		t.Fatalf("%d stacks in the window, want %d", len(w.Stacks), len(want))
	}
	for _, st := range w.Stacks {
		if !slices.ContainsFunc(want, func(pcs []uint64) bool { return slices.Equal(st.PCs, pcs) }) {
			t.Errorf("stack %#x in the window, not spooled", st.PCs)
		}
	}
	var n int64
	for _, smp := range w.Samples {
		n += smp.Count
	}
	if n != 100+2+64+5 {
		t.Errorf("%d samples in the window, want %d", n, 100+2+64+5)
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

// TestSpoolPathFindsTheTreesNodes: a thread's stacks found through its
// last stack's path (the outer frames they share) get the nodes a search
// of the whole tree gives, across stacks deeper, shallower and
// branching anywhere, a reset of the tree (the path goes stale) and two
// threads taking turns; in steady state the paths allocate nothing.
func TestSpoolPathFindsTheTreesNodes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var tree spoolTree
	var paths [2]spoolPath
	stack := func() []uint64 {
		n := 1 + r.IntN(12)
		pcs := make([]uint64, n)
		for i := range pcs {
			// The same two outermost frames (a thread's start), then
			// few addresses a level: stacks share outer frames.
			pcs[n-1-i] = uint64(0x1000 * (i + 1))
			if i >= 2 {
				pcs[n-1-i] += uint64(r.IntN(3))
			}
		}
		return pcs
	}
	for i := range 20000 {
		if i == 9000 {
			tree.reset()
		}
		pcs := stack()
		got, _, ok := tree.node(pcs, &paths[i%2])
		if !ok {
			t.Fatal("tree full")
		}
		var fresh spoolPath
		fresh.gen = tree.gen + 1 // stale: searched from the root
		want, added, _ := tree.node(pcs, &fresh)
		if got != want || added != 0 {
			t.Fatalf("stack %d %#x: node %d through the path, %d from the root (%d added)", i, pcs, got, want, added)
		}
		if st := tree.appendStack(nil, got); !slices.Equal(st, pcs) {
			t.Fatalf("stack %d: node %d is %#x, want %#x", i, got, st, pcs)
		}
	}
	pcs := stack()
	if a := testing.AllocsPerRun(100, func() { tree.node(pcs, &paths[0]) }); a != 0 {
		t.Errorf("%v allocations a stack found through a path, want 0", a)
	}
}
