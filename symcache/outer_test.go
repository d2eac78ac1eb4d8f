package symcache

import (
	"debug/elf"
	"os"
	"testing"
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
	if checkOuterLine(t, tab, elfFuncAddrs(t, bin, "worker", "other", "main")) == 0 {
		t.Error("no inlined frames: gcc -O2 should inline sq and sum_sq")
	}
}

// TestOuterLineGo checks OuterLine against Lines on the test binary's own
// pclntab, every 211th byte of its text, inlined code included.
func TestOuterLineGo(t *testing.T) {
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
