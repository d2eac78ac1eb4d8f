package exporter

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/symcache"
)

// strippedWindow is a window over the stripped Mach-O fixture
// (images/testdata/macho, only LC_FUNCTION_STARTS left to find functions),
// loaded with a slide: one sample at every instruction of the function
// that starts at link address start and ends at end, each with the same
// caller.
func strippedWindow(t *testing.T, start, end, caller uint64) *profile.Window {
	t.Helper()
	const slide = 0x4000
	bin := filepath.Join("..", "images", "testdata", "macho", "prog_arm64_stripped")
	img, f, err := images.MachOImageFromFile(bin, "", 0x100000000+slide)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	w := &profile.Window{
		Start: time.Unix(1700000000, 0), End: time.Unix(1700000010, 0),
		Period: 10 * time.Millisecond, Mode: profile.ModeCPU,
		Processes: []profile.Process{{PID: 7, Executable: img.Path, Images: images.NewSet([]*images.Image{img})}},
	}
	for a := start; a < end; a += 4 {
		w.Stacks = append(w.Stacks, profile.Stack{PCs: []uint64{a + slide, caller + slide}})
		w.Samples = append(w.Samples, profile.Sample{Stack: len(w.Stacks) - 1, PID: 7, Thread: 1, Count: 1})
	}
	return w
}

// TestStrippedFunctionOneFrame checks that every sample of one unnamed
// function of a stripped Mach-O lands in one frame, named by the
// function's start, in pprof and in folded stacks (which flame graphs
// draw).
func TestStrippedFunctionOneFrame(t *testing.T) {
	// func_10 of prog.c spans [0x100000388, 0x1000003c0) in prog_arm64;
	// the stripped copy keeps its start in LC_FUNCTION_STARTS. The
	// caller is an address inside main.
	const start, end = 0x100000388, 0x1000003c0
	cache := symcache.New(symcache.Options{})
	full := filepath.Join("..", "images", "testdata", "macho", "prog_arm64")
	fimg, ff, err := images.MachOImageFromFile(full, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	ff.Close()
	for a := uint64(start); a < end; a += 4 {
		if fr := cache.Symbolize(fimg, a, false); fr[len(fr)-1].Function != "func_10" {
			t.Fatalf("fixture changed: %#x is %q in the unstripped file, want func_10", a, fr[len(fr)-1].Function)
		}
	}
	tab, err := cache.Table(fimg)
	if err != nil {
		t.Fatal(err)
	}
	mainStart := uint64(0)
	for i := 0; i < tab.Len(); i++ {
		if n, s := tab.Symbol(i); n == "main" {
			mainStart = s
		}
	}
	if mainStart == 0 {
		t.Fatal("no main in the fixture")
	}
	w := strippedWindow(t, start, end, mainStart+8)
	// A cache of its own: the stripped file has the UUID of the full one.
	cache = symcache.New(symcache.Options{})
	const name = "prog_arm64_stripped+0x100000388"

	p, err := Profile(w, cache, Options{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := map[string]int64{}
	for _, s := range p.Sample {
		for _, ln := range s.Location[0].Line {
			leaf[ln.Function.Name] += s.Value[0]
		}
	}
	if len(leaf) != 1 || leaf[name] != int64(len(w.Samples)) {
		t.Errorf("pprof leaf functions %v, want all %d samples in %s", leaf, len(w.Samples), name)
	}
	if m := p.Mapping[0]; !m.HasFunctions {
		t.Errorf("mapping %+v: has_functions false though every location is named", m)
	}

	var out bytes.Buffer
	if err := Write(&out, FormatFolded, w, cache, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 || !strings.HasSuffix(lines[0], ";"+name+" "+strconv.Itoa(len(w.Samples))) {
		t.Errorf("folded: %q, want one line ending in %s %d", out.String(), name, len(w.Samples))
	}
}
