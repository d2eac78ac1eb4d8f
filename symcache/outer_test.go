package symcache

import (
	"debug/elf"
	"math/rand"
	"os"
	"slices"
	"testing"

	"github.com/macprof/macprof/images"
)

// collapse is what OuterLine must answer for frames: the last frame's
// function and the first frame's file:line.
func collapse(fs []Frame) (function, file string, line int, ok bool) {
	if len(fs) == 0 {
		return "", "", 0, false
	}
	return fs[len(fs)-1].Function, fs[0].File, fs[0].Line, true
}

// checkOuterLine compares t.OuterLine with the frames of t's line source
// at each address; it returns how many addresses had inlined frames.
func checkOuterLine(t *testing.T, tab *Table, addrs []uint64) (inlined int) {
	t.Helper()
	bad := 0
	for _, a := range addrs {
		fs := tab.lines.Lines(a)
		if len(fs) > 1 {
			inlined++
		}
		wf, wfile, wline, wok := collapse(fs)
		f, file, line, ok := tab.OuterLine(a)
		if f != wf || file != wfile || line != wline || ok != wok {
			if bad++; bad <= 5 {
				t.Errorf("%#x: OuterLine %q %s:%d %v; Lines %+v", a, f, file, line, ok, fs)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d addresses differ", bad, len(addrs))
	}
	return inlined
}

// TestOuterLineDWARF checks OuterLine against Lines at every byte of a C
// program built with gcc -O2 -g, where sq and sum_sq are inlined.
func TestOuterLineDWARF(t *testing.T) {
	bin := buildInlineC(t)
	tab, err := New(Options{}).Table(execImage(t, bin, 0x555555554000))
	if err != nil || !tab.HasLines() {
		t.Fatalf("table: %v, lines %v", err, tab != nil && tab.HasLines())
	}
	addrs := elfFuncAddrs(t, bin, "worker", "other", "main")
	if checkOuterLine(t, tab, addrs) == 0 {
		t.Error("no inlined frames: gcc -O2 should inline sq and sum_sq")
	}

	// OuterLine alone reads no inlined subroutine.
	tab, err = New(Options{}).Table(execImage(t, bin, 0x555555554000))
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, a := range addrs {
		if f, _, _, ok := tab.OuterLine(a); ok && f != "" {
			named++
		}
	}
	l, ok := tab.lines.(*lazyLines).source().(*DWARFLines)
	if !ok || named == 0 {
		t.Fatalf("lines from %T, %d addresses named", tab.lines.(*lazyLines).source(), named)
	}
	if n := loadedUnits(l); n != 0 {
		t.Errorf("OuterLine read the inlined subroutines of %d units", n)
	}
	for i := range l.units {
		if x := l.units[i].outer.Load(); x != nil {
			for _, n := range x.nodes {
				if len(n.children) > 0 {
					t.Errorf("an outer index holds inlined subroutines under %s", n.name)
				}
			}
		}
	}
}

// selfLines returns the test binary's .text section, the binary as an
// image, and its table with lines (from its pclntab).
func selfLines(t *testing.T) (*elf.Section, *images.Image, *Table) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	text := f.Section(".text")
	f.Close()
	if text == nil {
		t.Fatalf("%s: no .text", exe)
	}
	img := execImage(t, exe, 0)
	tab, err := New(Options{}).Table(img)
	if err != nil || !tab.HasLines() {
		t.Fatalf("table: %v", err)
	}
	return text, img, tab
}

// TestOuterLineGo checks OuterLine against Lines on the test binary's own
// pclntab, every 211th byte of its text, inlined code included.
func TestOuterLineGo(t *testing.T) {
	text, img, tab := selfLines(t)
	var addrs []uint64
	for a := text.Addr; a < text.Addr+text.Size; a += 211 {
		addrs = append(addrs, a-img.Start+img.Offset)
	}
	// Table addresses are link-time ones: map through the table.
	for i, off := range addrs {
		va, ok := tab.Address(off)
		if !ok {
			t.Fatalf("file offset %#x not mapped", off)
		}
		addrs[i] = va
	}
	if n := checkOuterLine(t, tab, addrs); n == 0 {
		t.Error("no inlined frames in the test binary")
	}
}

// TestOuterLineInlineTree checks the hand-built pclntab: inlined code
// has no frame without go:func.*, and the innermost position with it.
func TestOuterLineInlineTree(t *testing.T) {
	data, gofunc := inlinePclntab()
	p, err := ParseGopclntab(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok := p.OuterLine(0x401003); ok {
		t.Error("inlined code without go:func.*: a line")
	}
	p.SetGoFunc(gofunc)
	for pc := uint64(0x401000); pc < 0x401020; pc++ {
		wf, wfile, wline, wok := collapse(p.Lines(pc))
		if f, file, line, ok := p.OuterLine(pc); f != wf || file != wfile || line != wline || ok != wok {
			t.Errorf("%#x: OuterLine %q %s:%d %v, Lines says %q %s:%d %v", pc, f, file, line, ok, wf, wfile, wline, wok)
		}
	}
}

// TestLineCursorGo checks LineCursor against OuterLine on the test
// binary's own pclntab, at every 197th byte of its text given in
// increasing, decreasing and shuffled order, and at every byte of a run of
// functions: a cursor must answer as a fresh walk from the entry does.
func TestLineCursorGo(t *testing.T) {
	text, img, tab := selfLines(t)
	va := func(a uint64) uint64 {
		v, ok := tab.Address(a - img.Start + img.Offset)
		if !ok {
			t.Fatalf("%#x not mapped", a)
		}
		return v
	}
	type answer struct {
		function, file string
		line           int
		ok             bool
	}
	want := map[uint64]answer{}
	var addrs []uint64
	add := func(a uint64) {
		v := va(a)
		var w answer
		w.function, w.file, w.line, w.ok = tab.OuterLine(v)
		want[v] = w
		addrs = append(addrs, v)
	}
	for a := text.Addr; a < text.Addr+text.Size; a += 197 {
		add(a)
	}
	dense := text.Addr + text.Size/2
	for a := dense; a < dense+4096; a++ {
		add(a)
	}
	slices.Sort(addrs)
	down := slices.Clone(addrs)
	slices.Reverse(down)
	shuffled := slices.Clone(addrs)
	rand.New(rand.NewSource(1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, order := range [][]uint64{addrs, down, shuffled} {
		c := tab.LineCursor()
		bad := 0
		for _, a := range order {
			w := want[a]
			wf, wfile, wline, wok := w.function, w.file, w.line, w.ok
			if f, file, line, ok := c.OuterLine(a); f != wf || file != wfile || line != wline || ok != wok {
				if bad++; bad <= 5 {
					t.Errorf("%#x: cursor %q %s:%d %v, OuterLine %q %s:%d %v", a, f, file, line, ok, wf, wfile, wline, wok)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%d of %d addresses differ", bad, len(order))
		}
	}
}

// TestLineCursorInlineTree checks the cursor on the hand-built pclntab
// without and with go:func.*, every pc up and down.
func TestLineCursorInlineTree(t *testing.T) {
	data, gofunc := inlinePclntab()
	for _, withTree := range []bool{false, true} {
		p, err := ParseGopclntab(data, 0)
		if err != nil {
			t.Fatal(err)
		}
		if withTree {
			p.SetGoFunc(gofunc)
		}
		var pcs []uint64
		for pc := uint64(0x400ff0); pc < 0x401030; pc++ {
			pcs = append(pcs, pc)
		}
		c := goLineCursor{t: p}
		for pass := 0; pass < 2; pass++ {
			for _, pc := range pcs {
				wf, wfile, wline, wok := p.OuterLine(pc)
				if f, file, line, ok := c.outerLine(pc); f != wf || file != wfile || line != wline || ok != wok {
					t.Errorf("go:func.* %v, %#x: cursor %q %s:%d %v, OuterLine %q %s:%d %v", withTree, pc, f, file, line, ok, wf, wfile, wline, wok)
				}
			}
			slices.Reverse(pcs)
		}
	}
}
