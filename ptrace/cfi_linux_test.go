//go:build linux && (amd64 || arm64)

package ptrace

import (
	"debug/elf"
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"github.com/macprof/macprof/unwind/cfi"
)

// buildLeaf compiles testdata/leaf.c with gcc and flags (no PIE, so that
// addresses are the symbols' own) and returns the binary and a function
// naming an address.
func buildLeaf(t *testing.T, flags ...string) (string, func(uint64) string) {
	t.Helper()
	return buildFixture(t, "leaf.c", flags...)
}

// buildFixture is buildLeaf for testdata/src.
func buildFixture(t *testing.T, src string, flags ...string) (string, func(uint64) string) {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatalf("gcc is needed to build testdata/%s: apt-get install gcc, or run scripts/install-deps.sh", src)
	}
	bin := filepath.Join(t.TempDir(), "fixture")
	args := append(append([]string{}, flags...), "-no-pie", "-o", bin, filepath.Join("testdata", src))
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
	var funcs []elf.Symbol
	for _, s := range testprog.ELFSymbols(t, bin) {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			funcs = append(funcs, s)
		}
	}
	sort.Slice(funcs, func(i, j int) bool { return funcs[i].Value < funcs[j].Value })
	return bin, func(pc uint64) string {
		i := sort.Search(len(funcs), func(i int) bool { return funcs[i].Value > pc }) - 1
		if i < 0 || pc >= funcs[i].Value+max(funcs[i].Size, 1) {
			return "?"
		}
		return funcs[i].Name
	}
}

// startSampled starts bin (which prints "ready"), attaches to it with
// kernel samples every period, reads its images and captures its main
// thread once by stopping it, which opens the thread's ring.
func startSampled(t *testing.T, bin string, period time.Duration) (*testprog.Proc, *Target, target.ThreadID, *target.Capture) {
	t.Helper()
	p := testprog.Start(t, bin)
	tg, err := Attach(p.PID, target.Options{Continuous: true, Kernel: target.KernelSampling{Period: period}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	if _, err := tg.Images(); err != nil {
		t.Fatal(err)
	}
	tid := target.ThreadID(p.PID)
	c := target.NewCapture(64, 64<<10)
	if err := captureStop(t, tg, tid, c); err != nil {
		t.Fatal(err)
	}
	return p, tg, tid, c
}

// newSample reports whether it captured tid from a kernel sample newer
// than the last, failing the test at any other error than none yet.
func newSample(t *testing.T, tg *Target, tid target.ThreadID, c *target.Capture) bool {
	t.Helper()
	err := tg.Capture(tid, c)
	if err != nil && !errors.Is(err, ErrNoSample) {
		t.Fatal(err)
	}
	return err == nil
}

// names symbolizes a walk: the PC, then each return address minus one.
func names(pcs []uint64, name func(uint64) string) []string {
	var out []string
	for i, pc := range pcs {
		if i > 0 {
			pc--
		}
		out = append(out, name(pc))
	}
	return out
}

// TestCFIWalkKeepsTheLeafsCaller is the leaf case of issue 13: a sample in
// spin, a leaf without a frame record, called from alpha, called from
// main, names all three, in order, once each, from kernel samples and from
// stops, with gcc's frame pointers (but none in the leaf) and with none at
// all.
func TestCFIWalkKeepsTheLeafsCaller(t *testing.T) {
	for _, fl := range [][]string{
		{"-O1", "-fno-omit-frame-pointer"},
		{"-O2", "-fomit-frame-pointer"},
	} {
		t.Run(fl[1], func(t *testing.T) {
			bin, name := buildLeaf(t, fl...)
			// The first capture stops the thread (and opens its ring):
			// its walk may come before the table is built.
			p, tg, _, c := startSampled(t, bin, 5*time.Millisecond)
			kernel := 0
			if !testprog.Poll(10*time.Second, func() bool {
				if !newSample(t, tg, target.ThreadID(p.PID), c) {
					return false
				}
				kernel++
				got := names(c.PCs, name)
				if len(got) < 3 || !slices.Equal(got[:3], []string{"spin", "alpha", "main"}) {
					t.Fatalf("kernel sample walk %v (%v, %d CFI frames); want spin, alpha, main, ...", got, c.Walk.Stop, c.Walk.CFIFrames)
				}
				if c.Walk.CFIFrames == 0 {
					t.Errorf("walk %v used no unwind table", got)
				}
				if slices.Contains(got[3:], "spin") || slices.Contains(got[3:], "alpha") || slices.Contains(got[3:], "main") {
					t.Errorf("walk %v repeats a frame", got)
				}
				return kernel == 5
			}) {
				t.Fatalf("%d kernel samples in 10 s, want 5", kernel)
			}
			// With the table built, a kernel sample's capture and walk
			// allocate nothing.
			sampled := 0
			allocs := testing.AllocsPerRun(20, func() {
				time.Sleep(6 * time.Millisecond)
				if err := tg.Capture(target.ThreadID(p.PID), c); err == nil {
					sampled++
				} else if !errors.Is(err, ErrNoSample) {
					t.Fatal(err)
				}
			})
			if sampled == 0 || c.Walk.CFIFrames == 0 {
				t.Errorf("%d kernel samples, the last with %d CFI frames", sampled, c.Walk.CFIFrames)
			}
			if allocs != 0 {
				t.Errorf("kernel sample walked with tables: %.1f allocations, want 0", allocs)
			}
			// A stop, once the table is built. A loaded machine may not
			// stop the thread in time: it is then held, attached, until
			// tendStuck sees it stopped and lets it go (as the sampler's
			// ticks do), from the OS thread that attached it, and tried
			// again.
			var err error
			runtime.LockOSThread() // every ptrace request of a capture from one thread, as Capture does
			testprog.Poll(30*time.Second, func() bool {
				tg.hotMu.Lock()
				tg.tendStuck()
				err = tg.captureTransient(p.PID, c)
				tg.hotMu.Unlock()
				return !errors.Is(err, target.ErrStopTimeout)
			})
			runtime.UnlockOSThread()
			if err != nil || c.Stopped == 0 {
				t.Fatalf("stop: %v, stopped %v", err, c.Stopped)
			}
			if got := names(c.PCs, name); len(got) < 3 || !slices.Equal(got[:3], []string{"spin", "alpha", "main"}) {
				t.Errorf("stopped walk %v; want spin, alpha, main, ...", got)
			}
			// For the record: what frame pointers alone give.
			fp := tg.walker
			st := unwind.Stack{Base: c.StackBase, Data: c.Stack, Lo: c.StackBase, Hi: c.StackBase + uint64(len(c.Stack))}
			pcs, _ := fp.Walk(c.Regs, &st, make([]uint64, 0, 64))
			t.Logf("frame pointers alone: %v", names(pcs, name))
		})
	}
}

// TestKernelSamplesCompileOnlyTheFDEsTheyMeet: a sampled process's unwind
// tables are compiled FDE by FDE as its walks meet them, not whole at
// load: after kernel samples of the leaf fixture, whose walks go through
// libc's __libc_start_call_main, libc's table holds rows, but under a tenth
// of those of all its FDEs.
func TestKernelSamplesCompileOnlyTheFDEsTheyMeet(t *testing.T) {
	bin, name := buildLeaf(t, "-O2", "-fomit-frame-pointer")
	p, tg, _, c := startSampled(t, bin, 5*time.Millisecond)
	kernel := 0
	if !testprog.Poll(10*time.Second, func() bool {
		if !newSample(t, tg, target.ThreadID(p.PID), c) {
			return false
		}
		kernel++
		if got := names(c.PCs, name); len(got) < 4 || c.Walk.CFIFrames < 3 {
			t.Fatalf("kernel sample walk %v (%v, %d CFI frames): not through main into libc", got, c.Walk.Stop, c.Walk.CFIFrames)
		}
		return kernel == 10
	}) {
		t.Fatalf("%d kernel samples in 10 s, want 10", kernel)
	}
	imgs, err := tg.Images()
	if err != nil {
		t.Fatal(err)
	}
	var libc *images.Image
	for _, im := range imgs.Images() {
		if strings.HasPrefix(im.Name(), "libc.so") {
			libc = im
		}
	}
	if libc == nil {
		t.Fatalf("no libc among %v", imgs.Images())
	}
	tab := cfiTables.Table(libc.Key(), libc.File())
	if tab == nil || !tab.Lazy() {
		t.Fatalf("libc's table %v: not indexed lazily", tab)
	}
	all, err := cfi.Load(libc.File())
	if err != nil {
		t.Fatal(err)
	}
	all.CompileAll()
	if tab.Rows() == 0 || 10*tab.Rows() > all.Rows() {
		t.Errorf("libc: %d rows compiled by the walks, %d in all its FDEs", tab.Rows(), all.Rows())
	}
	t.Logf("libc: %d of %d rows compiled", tab.Rows(), all.Rows())
}
