package unwind_test

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/unwind"
	"github.com/macprof/macprof/unwind/cfi"
	"golang.org/x/sys/unix"
)

// synthTable is the internal tests' synthetic object compiled by
// unwind/cfi.
func synthTable(arch unwind.Arch) *cfi.Table {
	offs, rules := unwind.SynthRows(arch)
	rows := make([]cfi.Row, len(offs))
	for i := range offs {
		rows[i] = cfi.Row{Off: offs[i], Rule: rules[i]}
	}
	return cfi.FromRows(arch, rows, unwind.SynthEnd)
}

// cfiObject is the Tables of a process with the synthetic object mapped,
// its rules from a cfi.Table.
type cfiObject struct{ t *cfi.Table }

func (o cfiObject) Rule(pc uint64) (*unwind.Rule, bool) {
	if pc >= unwind.SynthBase && pc < unwind.SynthBase+unwind.SynthSize {
		return o.t.Find(pc - unwind.SynthBase), o.t.FramePointers()
	}
	return nil, false
}

// resolverOf is the synthetic object behind a cfi.Resolver, as a backend
// has it: the rule of each address cached after its first lookup.
func resolverOf(arch unwind.Arch) *cfi.Resolver {
	tab := synthTable(arch)
	c := cfi.NewCache(cfi.CacheOptions{Load: func(string) (*cfi.Table, error) { return tab, nil }})
	return cfi.NewResolver(c, []cfi.Object{{Start: unwind.SynthBase, Limit: unwind.SynthBase + unwind.SynthSize, Key: "k", Path: "p"}})
}

// TestWalkCFIThroughAResolver: the walks of the frameless stack through
// unwind/cfi's table and through a resolver (rules cached per address)
// are the walk through the rows, the first walk (which builds the table)
// and the next.
func TestWalkCFIThroughAResolver(t *testing.T) {
	st, regs, want := unwind.SynthFrameless()
	w := unwind.MustWalker(t, unwind.Config{Arch: unwind.ArchAMD64})
	if got, res := w.WalkCFI(regs, st, cfiObject{synthTable(unwind.ArchAMD64)}, make([]uint64, 0, 64)); !slices.Equal(got, want) || res.Stop != unwind.StopEnd || res.CFIFrames != 3 {
		t.Errorf("walk through the table: %#x, %v, %d CFI frames; want %#x", got, res.Stop, res.CFIFrames, want)
	}
	r := resolverOf(unwind.ArchAMD64)
	for i := 0; i < 2; i++ {
		got, res := w.WalkCFI(regs, st, r, make([]uint64, 0, 64))
		if !slices.Equal(got, want) || res.Stop != unwind.StopEnd || res.CFIFrames != 3 {
			t.Errorf("walk %d: %#x, %v, %d CFI frames; want %#x", i, got, res.Stop, res.CFIFrames, want)
		}
	}
	if a := testing.AllocsPerRun(100, func() { w.WalkCFI(regs, st, r, make([]uint64, 0, 64)) }); a > 1 {
		t.Errorf("%v allocations per walk (the output slice's is the test's)", a)
	}
}

// BenchmarkWalkCFI walks 64 frameless frames with a warm table: ns/frame
// is the cost of one frame (lookup and reads), in a recursion and
// alternating between two functions, looking each address up in the table
// ("table": a binary search per frame) or through a resolver whose rule
// cache holds them ("resolver", as after a target's first samples).
func BenchmarkWalkCFI(b *testing.B) {
	w := unwind.MustWalker(b, unwind.Config{Arch: unwind.ArchAMD64})
	for _, c := range []struct {
		name   string
		alt    bool
		tables unwind.Tables
	}{
		{"table/recursion", false, cfiObject{synthTable(unwind.ArchAMD64)}},
		{"table/alternating", true, cfiObject{synthTable(unwind.ArchAMD64)}},
		{"resolver/recursion", false, resolverOf(unwind.ArchAMD64)},
		{"resolver/alternating", true, resolverOf(unwind.ArchAMD64)},
	} {
		alt, tables := c.alt, c.tables
		b.Run(c.name, func(b *testing.B) {
			st, regs := unwind.SynthCalls(64, alt)
			dst := make([]uint64, 0, 128)
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := threadCPU(b)
			for b.Loop() {
				dst, _ = w.WalkCFI(regs, st, tables, dst)
			}
			cpu = threadCPU(b) - cpu
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(dst)), "ns/frame")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(len(dst)), "cpu-ns/frame")
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
