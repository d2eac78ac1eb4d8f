package collectortest

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

// Real functions of the test binary: fixtures put their addresses in
// stacks, so that symbolization goes through real ELF images.

// LeafWork is a leaf function whose address fixtures use.
//
//go:noinline
func LeafWork(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i*i ^ n
	}
	return s
}

// MiddleWork calls LeafWork.
//
//go:noinline
func MiddleWork(n int) int { return LeafWork(n) + LeafWork(n+1)*7 }

// RootWork calls MiddleWork.
//
//go:noinline
func RootWork(n int) int { return MiddleWork(n)*3 + MiddleWork(n*2) }

// GoSymbolLoader loads an ELF image with symcache.LoadELF, except a Go
// binary without .symtab (go test links with -s): its table is built from
// the Go function table (.gopclntab), so that a test binary's own functions
// get their real names.
func GoSymbolLoader(img *images.Image) (*symcache.Table, error) {
	f, err := elf.Open(img.File())
	if err != nil {
		return symcache.LoadELF(img)
	}
	defer f.Close()
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if f.Section(".symtab") != nil || pcln == nil || text == nil {
		return symcache.LoadELF(img)
	}
	data, err := pcln.Data()
	if err != nil {
		return nil, fmt.Errorf("collectortest: %s: %w", img.Path, err)
	}
	gt, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil, fmt.Errorf("collectortest: %s: %w", img.Path, err)
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

// NewCache returns a symbol cache that symbolizes Go test binaries.
func NewCache() *symcache.Cache {
	return symcache.New(symcache.Options{Loaders: map[images.Format]symcache.Loader{images.FormatELF: GoSymbolLoader}})
}

// Fixture is a window over the test process itself, with the names of the
// functions its stacks go through.
type Fixture struct {
	Window *profile.Window
	// Leaf, Middle and Root are the fully qualified names of LeafWork,
	// MiddleWork and RootWork.
	Leaf, Middle, Root string
	// LeafPC is LeafWork's entry; MiddleRet and RootRet are return
	// addresses inside MiddleWork and RootWork.
	LeafPC, MiddleRet, RootRet uint64
	// Executable is the test binary's path.
	Executable string
	// BuildID is the test binary's GNU build ID as images reports it, "" if
	// it has none.
	BuildID string
}

// pcs returns fn's entry and a return address inside it.
func pcs(t testing.TB, fn any) (entry, ret uint64, name string) {
	t.Helper()
	e := reflect.ValueOf(fn).Pointer()
	f := runtime.FuncForPC(e)
	if f == nil {
		t.Fatalf("collectortest: no function at %#x", e)
	}
	if g := runtime.FuncForPC(e + 7); g == nil || g.Name() != f.Name() {
		t.Fatalf("collectortest: %s is shorter than 8 bytes", f.Name())
	}
	return uint64(e), uint64(e + 8), f.Name()
}

// SelfProcess returns the test process as a profile.Process with pid, its
// images read from /proc/self/maps.
func SelfProcess(t testing.TB, pid int) profile.Process {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatalf("collectortest: this fixture needs /proc/self/maps (Linux): %v", err)
	}
	defer f.Close()
	regs, err := images.ParseProcMaps(f)
	if err != nil {
		t.Fatalf("collectortest: %v", err)
	}
	imgs := regs.ELFImages()
	for _, im := range imgs {
		if im.BuildID == "" {
			im.BuildID = elfBuildID(im.File())
		}
	}
	set := images.NewSet(imgs)
	entry := reflect.ValueOf(LeafWork).Pointer()
	img := set.Lookup(uint64(entry))
	if img == nil {
		t.Fatalf("collectortest: no image holds LeafWork at %#x", entry)
	}
	return profile.Process{PID: pid, Executable: img.Path, Images: set}
}

// elfBuildID reads the GNU build ID note of an ELF file, or "".
func elfBuildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE || s.Size > 1<<16 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		for len(data) >= 12 {
			order := f.ByteOrder
			nsz, dsz, typ := order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:])
			nEnd := 12 + (uint64(nsz)+3)&^3
			dEnd := nEnd + (uint64(dsz)+3)&^3
			if dEnd > uint64(len(data)) || 12+uint64(nsz) > uint64(len(data)) || nEnd+uint64(dsz) > uint64(len(data)) {
				break
			}
			if typ == 3 && nsz == 4 && string(data[12:15]) == "GNU" {
				return fmt.Sprintf("%x", data[nEnd:nEnd+uint64(dsz)])
			}
			data = data[dEnd:]
		}
	}
	return ""
}

// NewFixture returns a window of the test process (under the given PID)
// with two threads: "worker" (tid 11) in LeafWork <- MiddleWork <- RootWork
// 50 times, and "io" (tid 12) in MiddleWork <- RootWork 7 times; plus one
// truncated stack in LeafWork for thread 13 (no name) 2 times.
func NewFixture(t testing.TB, pid int) *Fixture {
	t.Helper()
	fx := &Fixture{}
	fx.LeafPC, _, fx.Leaf = pcs(t, LeafWork)
	_, fx.MiddleRet, fx.Middle = pcs(t, MiddleWork)
	_, fx.RootRet, fx.Root = pcs(t, RootWork)
	p := SelfProcess(t, pid)
	fx.Executable = p.Executable
	if img := p.Images.Lookup(fx.LeafPC); img != nil {
		fx.BuildID = img.BuildID
	}
	start := time.Now().Add(-10 * time.Second).Truncate(time.Second)
	fx.Window = &profile.Window{
		Start:     start,
		End:       start.Add(10 * time.Second),
		Period:    10 * time.Millisecond,
		Mode:      profile.ModeCPU,
		Processes: []profile.Process{p},
		Stacks: []profile.Stack{
			{PCs: []uint64{fx.LeafPC, fx.MiddleRet, fx.RootRet}},
			{PCs: []uint64{fx.MiddleRet - 8, fx.RootRet}},
			{PCs: []uint64{fx.LeafPC}, Truncated: true},
		},
		Samples: []profile.Sample{
			{Stack: 0, PID: pid, Thread: 11, ThreadName: "worker", Count: 50},
			{Stack: 1, PID: pid, Thread: 12, ThreadName: "io", Count: 7},
			{Stack: 2, PID: pid, Thread: 13, Count: 2},
		},
		Missed: map[profile.MissReason]int64{profile.MissThreadGone: 3},
	}
	return fx
}
