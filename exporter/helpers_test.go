package exporter

import (
	"debug/elf"
	"debug/gosym"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
)

// Real functions of the test binary, whose addresses the tests put in
// stacks so that symbolization goes through the real ELF loader.

//go:noinline
func leafWork(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i*i ^ n
	}
	return s
}

//go:noinline
func middleWork(n int) int { return leafWork(n) + leafWork(n+1)*7 }

//go:noinline
func rootWork(n int) int { return middleWork(n)*3 + middleWork(n*2) }

// pcs returns the entry PC of fn (a leaf PC) and a return address inside it
// (entry+8, so that the call instruction looked up at entry+7 is inside).
func pcs(t testing.TB, fn any) (leaf, ret uint64, name string) {
	t.Helper()
	entry := reflect.ValueOf(fn).Pointer()
	f := runtime.FuncForPC(entry)
	if f == nil {
		t.Fatalf("no runtime function at %#x", entry)
	}
	if g := runtime.FuncForPC(entry + 7); g == nil || g.Name() != f.Name() {
		t.Fatalf("%s is shorter than 8 bytes", f.Name())
	}
	return uint64(entry), uint64(entry + 8), f.Name()
}

// selfProcess returns the test process with the images from its own
// /proc/self/maps.
func selfProcess(t testing.TB, pid int) profile.Process {
	t.Helper()
	if runtime.GOOS != "linux" {
		// The images come from /proc/self/maps and an ELF test binary.
		t.Skipf("needs Linux (/proc/self/maps, an ELF test binary); this is %s", runtime.GOOS)
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatalf("this test needs /proc/self/maps (Linux): %v", err)
	}
	defer f.Close()
	regs, err := images.ParseProcMaps(f)
	if err != nil {
		t.Fatal(err)
	}
	set := images.NewSet(regs.ELFImages())
	entry := reflect.ValueOf(leafWork).Pointer()
	img := set.Lookup(uint64(entry))
	if img == nil {
		t.Fatalf("no image holds leafWork at %#x", entry)
	}
	return profile.Process{PID: pid, Executable: img.Path, Images: set}
}

// fakeLib is a synthetic image symbolized by fakeLoader, with an inlined
// call at fakeLib.Start+0x150: inner (a.c:10) inlined into outer (a.c:20).
var fakeLib = &images.Image{
	Path:    "/fake/libinl.so",
	BuildID: "00112233445566778899aabbccddeeff",
	Format:  images.FormatELF,
	Start:   0x7f0000000000,
	Limit:   0x7f0000010000,
}

type fakeLines struct{}

func (fakeLines) Lines(addr uint64) []symcache.Frame {
	if addr >= 0x140 && addr < 0x160 {
		return []symcache.Frame{
			{Function: "inner", File: "a.c", Line: 10, Inlined: true},
			{Function: "outer", File: "a.c", Line: 20},
		}
	}
	return nil
}

func fakeLoader(img *images.Image) (*symcache.Table, error) {
	if img.Path != fakeLib.Path {
		return goELFLoader(img)
	}
	return symcache.NewTable("libinl.so", []symcache.Symbol{
		{Name: "outer", Start: 0x100, Size: 0x100},
		{Name: "other;name\nwith<xml>&", Start: 0x200, Size: 0x100},
	}, nil, fakeLines{}), nil
}

// goELFLoader loads an ELF image with symcache.LoadELF, unless it has no
// .symtab (`go test` links its binaries with -s) but a Go function table
// (.gopclntab): then the table comes from that, so that the test binary's
// own functions have their real names and addresses. (With -race the
// stripped binary still has a few .dynsym functions from cgo, so "no
// symbols at all" is not the test.)
func goELFLoader(img *images.Image) (*symcache.Table, error) {
	if img.Path == "[vdso]" {
		return symcache.LoadELF(img)
	}
	f, err := elf.Open(img.File())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Section(".symtab") != nil || f.Section(".gopclntab") == nil {
		return symcache.LoadELF(img)
	}
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		return nil, fmt.Errorf("%s: no .symtab and no .gopclntab", img.Path)
	}
	data, err := pcln.Data()
	if err != nil {
		return nil, err
	}
	gt, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil, err
	}
	syms := make([]symcache.Symbol, 0, len(gt.Funcs))
	for _, fn := range gt.Funcs {
		syms = append(syms, symcache.Symbol{Name: fn.Name, Start: fn.Entry, Size: fn.End - fn.Entry})
	}
	var segs []symcache.Segment
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			segs = append(segs, symcache.Segment{Offset: p.Off, Addr: p.Vaddr, Size: p.Filesz})
		}
	}
	return symcache.NewTable(filepath.Base(img.Path), syms, segs, nil), nil
}

func newCache() *symcache.Cache {
	return symcache.New(symcache.Options{Loaders: map[images.Format]symcache.Loader{images.FormatELF: fakeLoader}})
}

// testWindow is a window over two processes sharing the test binary's
// images (as two processes of one executable would), plus the fake image
// in the first.
type testWindow struct {
	w                           *profile.Window
	leafName, midName, rootName string
	leafPC, midRet, rootRet     uint64
}

func newTestWindow(t testing.TB, mode profile.Mode) *testWindow {
	t.Helper()
	tw := &testWindow{}
	tw.leafPC, _, tw.leafName = pcs(t, leafWork)
	_, tw.midRet, tw.midName = pcs(t, middleWork)
	_, tw.rootRet, tw.rootName = pcs(t, rootWork)

	p1 := selfProcess(t, 1001)
	imgs := append([]*images.Image{fakeLib}, p1.Images.Images()...)
	p1.Images = images.NewSet(imgs)
	p2 := selfProcess(t, 1002)

	start := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	tw.w = &profile.Window{
		Start:     start,
		End:       start.Add(2 * time.Second),
		Period:    10 * time.Millisecond,
		Mode:      mode,
		Processes: []profile.Process{p1, p2},
		Stacks: []profile.Stack{
			{PCs: []uint64{tw.leafPC, tw.midRet, tw.rootRet}},             // 0
			{PCs: []uint64{tw.midRet - 8, tw.rootRet}},                    // 1: PC at middleWork's entry
			{PCs: []uint64{0x10, tw.midRet, tw.rootRet}},                  // 2: unknown leaf
			{PCs: []uint64{fakeLib.Start + 0x150, fakeLib.Start + 0x251}}, // 3: inlined leaf, "other" caller
			{PCs: []uint64{tw.leafPC}, Truncated: true},                   // 4
		},
		Samples: []profile.Sample{
			{Stack: 0, PID: 1001, Thread: 11, ThreadName: "worker", Count: 50},
			{Stack: 0, PID: 1001, Thread: 12, ThreadName: "worker", Count: 30},
			{Stack: 1, PID: 1001, Thread: 13, Count: 7},
			{Stack: 2, PID: 1001, Thread: 11, ThreadName: "worker", Count: 3},
			{Stack: 3, PID: 1001, Thread: 14, ThreadName: "io", Count: 4},
			{Stack: 4, PID: 1001, Thread: 11, ThreadName: "worker", Count: 2},
			{Stack: 0, PID: 1002, Thread: 21, ThreadName: "main", Count: 5},
			{Stack: 1, PID: 1002, Thread: 21, ThreadName: "main", Count: 0}, // ignored
		},
		Missed: map[profile.MissReason]int64{profile.MissThreadGone: 3, profile.MissTickLate: 1, profile.MissEmptyStack: 0},
		Stats:  profile.Stats{Ticks: 200, MissedTicks: 1, Captures: 99},
	}
	return tw
}
