package symcache

import (
	"debug/elf"
	"os"
	"testing"
)

// testBinaryPclntab returns the running test binary's pclntab parsed, with
// its go:func.* found as a loader finds it, and its functions.
func testBinaryPclntab(tb testing.TB) (*Gopclntab, []Symbol) {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	p, err := elfGoLines("test", f, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return p, p.Symbols(nil)
}

// TestGopclntabTestBinaryInlines checks that the loader finds go:func.* in
// the test binary (go test links with -s: from runtime.moduledata), so
// that its inlined code gets frames.
func TestGopclntabTestBinaryInlines(t *testing.T) {
	p, syms := testBinaryPclntab(t)
	if !p.Inlines() {
		t.Fatal("go:func.* not found: no inline tree")
	}
	inlined := 0
	for _, s := range syms {
		for a := s.Start; a < s.Start+s.Size && inlined < 100; a += 16 {
			if len(p.Lines(a)) > 1 {
				inlined++
			}
		}
	}
	if inlined < 100 {
		t.Errorf("only %d addresses with inlined frames", inlined)
	}
}

// BenchmarkGoLinesLoad reads and parses the test binary's pclntab and
// finds go:func.*: what the first lookup that needs a line costs for a Go
// binary (once per object).
func BenchmarkGoLinesLoad(b *testing.B) {
	exe, _ := os.Executable()
	f, err := elf.Open(exe)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := elfGoLines("test", f, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGoLinesLookup looks up the frames (file:line and inlined calls)
// of addresses spread over every function of the test binary.
func BenchmarkGoLinesLookup(b *testing.B) {
	p, syms := testBinaryPclntab(b)
	var addrs []uint64
	for i, s := range syms {
		addrs = append(addrs, s.Start+uint64(i*7)%max(s.Size, 1))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p.Lines(addrs[i%len(addrs)])
		i++
	}
}

// BenchmarkDWARFLinesLoad indexes the DWARF of a gcc -O2 -g C program
// (lines and inlined subroutines).
func BenchmarkDWARFLinesLoad(b *testing.B) {
	f, err := elf.Open(buildInlineCB(b))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.ReportAllocs()
	for b.Loop() {
		d, err := f.DWARF()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := NewDWARFLines(d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDWARFLinesLookup looks up every byte of worker in that program.
func BenchmarkDWARFLinesLookup(b *testing.B) {
	bin := buildInlineCB(b)
	f, err := elf.Open(bin)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		b.Fatal(err)
	}
	l, err := NewDWARFLines(d)
	if err != nil {
		b.Fatal(err)
	}
	syms, _ := f.Symbols()
	var addrs []uint64
	for _, s := range syms {
		if s.Name == "worker" {
			for a := s.Value; a < s.Value+s.Size; a++ {
				addrs = append(addrs, a)
			}
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		l.Lines(addrs[i%len(addrs)])
		i++
	}
}
