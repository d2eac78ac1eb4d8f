package mach_test

// The darwin Target's logic (everything in mach/ but the trampolines),
// driven on Linux by the real sampler and exporter against machtest's
// model of xnu. After every test the model checks that no port right,
// task_threads array, thread suspension or task hold was left behind.

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/sampler"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// machoFixture is a Mach-O file built by images/testdata/build.sh (clang
// -target {arm64,x86_64}-apple-macos11, ld64.lld).
func machoFixture(name string) string {
	return filepath.Join("..", "images", "testdata", "macho", name)
}

// Where the model's images and stacks go.
const (
	progSlide  = 0x4000
	libSlide   = 0x10_0000_0000
	stackTop   = 0x16f000000
	stackSize  = 64 << 10
	stackApart = 1 << 20
)

// symbols maps the symbol names of a Mach-O fixture to their addresses.
func symbols(t testing.TB, name string) map[string]uint64 {
	t.Helper()
	return fixture.MachOFunctions(t, machoFixture(name))
}

// chain is a call chain by function name, leaf first, and the addresses
// the model puts in registers and frame records: an instruction a few
// bytes into each function (return addresses too, so that pc-1 stays in
// the function).
type chain []string

func (c chain) pcs(t testing.TB, syms map[string]uint64, slide uint64) []uint64 {
	t.Helper()
	var out []uint64
	for i, name := range c {
		a, ok := syms[name]
		if !ok {
			t.Fatalf("no symbol %s in the image", name)
		}
		off := uint64(8)
		if i == 0 {
			off = 4
		}
		out = append(out, a+slide+off)
	}
	return out
}

// world is a model kernel with one task running the C fixture program and
// its dylib, whose threads move between the chains given.
type world struct {
	k      *machtest.Kernel
	task   *machtest.Task
	arch   unwind.Arch
	chains [][]chain // per thread
}

// newWorld builds the model: prog and libdemo for arch (arm64 or x86_64),
// one busy thread per entry of chains, each moving between its chains.
// The model's accounting is checked when the test ends.
func newWorld(t *testing.T, arch string, chains ...[]chain) *world {
	t.Helper()
	k := machtest.New()
	w := &world{k: k, arch: unwind.ArchARM64, chains: chains}
	if arch == "x86_64" {
		w.arch = unwind.ArchAMD64
	}
	task := k.NewTask(t, "/Users/dev/prog", []fixture.TaskImage{
		{File: machoFixture("prog_" + arch), Path: "/Users/dev/prog", Slide: progSlide},
		{File: machoFixture("libdemo_" + arch + ".dylib"), Path: "/usr/local/lib/libdemo.dylib", Slide: libSlide},
	})
	if arch == "x86_64" {
		k.GOARCHValue = "amd64"
		k.VABits = 0
	}
	w.task = task
	syms := symbols(t, "prog_"+arch)
	for i, cs := range chains {
		th := task.AddThread("worker-" + string(rune('a'+i)))
		th.Busy = true
		var stacks []*machtest.Stack
		for _, c := range cs {
			stacks = append(stacks, &machtest.Stack{PCs: c.pcs(t, syms, progSlide), LeafFrame: i%2 == 1})
		}
		th.SetStacks(w.arch, stackTop-uint64(i)*stackApart, stackSize, stacks...)
	}
	t.Cleanup(func() { k.Check(t) })
	return w
}

// attach attaches to the world's task and releases the Target when the
// test ends (before the model's check).
func (w *world) attach(t *testing.T, opts target.Options) *mach.Target {
	t.Helper()
	tg, err := mach.AttachKernel(w.k, w.task.PID, opts)
	if err != nil {
		t.Fatalf("AttachKernel: %v", err)
	}
	t.Cleanup(func() { tg.Release() })
	return tg
}

// record samples tgt with the real sampler for d and returns the window.
func record(t *testing.T, tgt target.Target, d time.Duration) *profile.Window {
	t.Helper()
	var win *profile.Window
	s, err := sampler.New(sampler.Config{Hz: 400, Mode: profile.ModeWall, OnWindow: func(w *profile.Window) { win = w }})
	if err != nil {
		t.Fatal(err)
	}
	s.Add(tgt)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := s.Run(ctx); err != nil && ctx.Err() == nil {
		t.Fatalf("Run: %v", err)
	}
	if win == nil {
		t.Fatal("no window")
	}
	return win
}

// stacks exports w as pprof and returns each sample's function names,
// leaf first, joined by ";", with their counts.
func stacks(t *testing.T, w *profile.Window) map[string]int64 {
	t.Helper()
	p, err := exporter.Profile(w, symcache.New(symcache.Options{}), exporter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return fixture.PprofStacks(p)
}

// want is the set of stacks, leaf first, the world's threads can be in.
func (w *world) want() []string {
	var out []string
	for _, cs := range w.chains {
		for _, c := range cs {
			out = append(out, strings.Join(c, ";"))
		}
	}
	return out
}

// checkStacks asserts that every sampled stack is one of the world's
// chains, symbolized, and that at least min of them were seen.
func checkStacks(t *testing.T, w *world, got map[string]int64, min int) {
	t.Helper()
	want := w.want()
	t.Logf("sampled stacks: %v", got)
	seen := 0
	for s, n := range got {
		if !slices.Contains(want, s) {
			t.Errorf("sampled stack %q (%d samples) is none of %q", s, n, want)
			continue
		}
		seen++
	}
	if seen < min {
		t.Errorf("%d distinct stacks sampled, want at least %d of %q (got %v)", seen, min, want, got)
	}
}

var (
	chainA = chain{"leaf", "func_10", "local_10", "main"}
	chainB = chain{"func_23", "local_23", "main"}
	chainC = chain{"leaf", "func_57", "local_57", "main"}
	chainD = chain{"func_90", "local_90", "main"}
)

// TestModelContinuousCapture records the model's task with the sampler
// (one thread_suspend capture per thread and tick) and checks the pprof:
// every stack is a chain the model's threads ran, named from the symbols
// the images have in the task's memory, for arm64 and x86_64.
func TestModelContinuousCapture(t *testing.T) {
	for _, arch := range []string{"arm64", "x86_64"} {
		t.Run(arch, func(t *testing.T) {
			w := newWorld(t, arch, []chain{chainA, chainB}, []chain{chainC, chainD})
			tg := w.attach(t, target.Options{Continuous: true})
			if tg.Arch() != w.arch {
				t.Fatalf("Arch %v, want %v", tg.Arch(), w.arch)
			}
			ids, err := tg.Threads(nil)
			if err != nil || len(ids) != 2 {
				t.Fatalf("Threads: %v, %v", ids, err)
			}
			for i, id := range ids {
				info, err := tg.Info(id)
				if want := w.task.Threads[i]; err != nil || info.Name != want.Name || uint64(info.ID) != want.ID || !info.Running {
					t.Errorf("Info(%d) = %+v, %v; want thread %d named %q, running", id, info, err, want.ID, want.Name)
				}
			}
			win := record(t, tg, 300*time.Millisecond)
			checkStacks(t, w, stacks(t, win), 4)
		})
	}
}
