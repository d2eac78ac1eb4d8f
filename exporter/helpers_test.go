package exporter

import (
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
)

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
		return fixture.GoSymbolLoader(img)
	}
	return symcache.NewTable("libinl.so", []symcache.Symbol{
		{Name: "outer", Start: 0x100, Size: 0x100},
		{Name: "other;name\nwith<xml>&", Start: 0x200, Size: 0x100},
	}, nil, fakeLines{}), nil
}

func newCache() *symcache.Cache {
	return symcache.New(symcache.Options{Loaders: map[images.Format]symcache.Loader{images.FormatELF: fakeLoader}})
}

// testWindow is a window over two processes sharing the test binary's
// images (as two processes of one executable would), plus the fake image
// in the first.
type testWindow struct {
	fixture.Funcs
	w *profile.Window
}

func newTestWindow(t testing.TB, mode profile.Mode) *testWindow {
	t.Helper()
	tw := &testWindow{Funcs: fixture.WorkFuncs(t)}

	p1 := fixture.SelfProcess(t, 1001)
	imgs := append([]*images.Image{fakeLib}, p1.Images.Images()...)
	p1.Images = images.NewSet(imgs)
	p2 := fixture.SelfProcess(t, 1002)

	start := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	tw.w = &profile.Window{
		Start:     start,
		End:       start.Add(2 * time.Second),
		Period:    10 * time.Millisecond,
		Mode:      mode,
		Processes: []profile.Process{p1, p2},
		Stacks: []profile.Stack{
			{PCs: []uint64{tw.LeafPC, tw.MiddleRet, tw.RootRet}},          // 0
			{PCs: []uint64{tw.MiddleRet - 8, tw.RootRet}},                 // 1: PC at middleWork's entry
			{PCs: []uint64{0x10, tw.MiddleRet, tw.RootRet}},               // 2: unknown leaf
			{PCs: []uint64{fakeLib.Start + 0x150, fakeLib.Start + 0x251}}, // 3: inlined leaf, "other" caller
			{PCs: []uint64{tw.LeafPC}, Truncated: true},                   // 4
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
