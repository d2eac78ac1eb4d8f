package symcache

import (
	"debug/elf"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/macprof/macprof/images"
)

// TestELFLinesReadNoLocationLists corrupts the compressed .debug_loclists
// of a gcc -O2 -g -gz program: its lines and inlined calls must still be
// read, the same as from the intact file, since a line lookup never reads
// location lists (f.DWARF, which decompresses every section, fails on it).
func TestELFLinesReadNoLocationLists(t *testing.T) {
	bin := buildInlineC(t, "-gdwarf-5", "-gz=zlib")
	addrs := elfFuncAddrs(t, bin, "worker", "other", "main")
	want := elfLinesOf(t, bin, addrs)

	raw, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".debug_loclists")
	if s == nil || s.Flags&elf.SHF_COMPRESSED == 0 || s.FileSize < 64 {
		f.Close()
		t.Fatalf("gcc -O2 -gz wrote no compressed .debug_loclists of 64 bytes or more: %+v", s)
	}
	off, size := s.Offset, s.FileSize
	f.Close()
	// Past the 24-byte compression header, the zlib stream becomes garbage.
	for i := off + 24; i < off+size; i++ {
		raw[i] = 0xff
	}
	bad := filepath.Join(t.TempDir(), "badloc")
	if err := os.WriteFile(bad, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	bf, err := elf.Open(bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bf.DWARF(); err == nil {
		t.Fatal("f.DWARF read the corrupted file: the test corrupts nothing that matters")
	}
	bf.Close()
	if got := elfLinesOf(t, bad, addrs); !reflect.DeepEqual(got, want) {
		t.Fatalf("lines with corrupted location lists differ from the intact file's:\n got %v\nwant %v", got, want)
	}
}

// elfLinesOf returns the frames of every address in addrs from bin's
// DWARF, read as the symbol cache reads it; it fails when none has a line.
func elfLinesOf(t *testing.T, bin string, addrs []uint64) [][]Frame {
	t.Helper()
	src := elfLines(bin, func() (*elf.File, func() error, error) { return openELF(bin) }, false, 0, true)
	if src == nil {
		t.Fatal("no line source")
	}
	out := make([][]Frame, len(addrs))
	lined := 0
	for i, a := range addrs {
		out[i] = src.Lines(a)
		if len(out[i]) > 0 && out[i][0].Line > 0 {
			lined++
		}
	}
	if l, ok := src.(*lazyLines); ok && l.Err() != nil {
		t.Fatalf("%s: %v", bin, l.Err())
	}
	if lined == 0 {
		t.Fatalf("%s: no address of %d has a line", bin, len(addrs))
	}
	return out
}

// BenchmarkELFLineDWARFLibc loads the line tables of this machine's libc
// from its separate debug file (libc6-dbg: zlib-compressed DWARF 5, what
// the agent reads for every C target), as the symbol cache does.
func BenchmarkELFLineDWARFLibc(b *testing.B) {
	path, absent := libcDebugFile()
	if path == "" {
		b.Skip(absent)
	}
	for _, bc := range []struct {
		name string
		load func(*elf.File) error
	}{
		{"lines", func(f *elf.File) error {
			d, err := elfLineDWARF(f)
			if err == nil {
				_, err = NewDWARFLines(d)
			}
			return err
		}},
		{"all-sections", func(f *elf.File) error {
			d, err := f.DWARF()
			if err == nil {
				_, err = NewDWARFLines(d)
			}
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f, err := elf.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.load(f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestNoDWARFLinesReadsNoDWARF: with NoDWARFLines an object whose lines
// come from DWARF is named by symbol and its DWARF never loaded, while a
// Go line table is still read; without it both give their lines.
func TestNoDWARFLinesReadsNoDWARF(t *testing.T) {
	img := &images.Image{Path: "/nonexistent/obj", BuildID: "0123456789abcdef", Format: images.FormatELF, Start: 0x10000, Limit: 0x20000}
	for _, noDWARF := range []bool{true, false} {
		for _, fromDWARF := range []bool{true, false} {
			lines := &countingLines{}
			loads := 0
			load := func() (LineSource, error) { loads++; return lines, nil }
			src := newLazyLines(load)
			if fromDWARF {
				src = newLazyDWARF(load)
			}
			c := New(Options{NoDWARFLines: noDWARF, Loaders: map[images.Format]Loader{images.FormatELF: func(*images.Image) (*Table, error) {
				return NewTable("obj", []Symbol{{Name: "outer", Start: 0x100, Size: 0x100}}, nil, src), nil
			}}})
			fr := c.Symbolize(img, 0x10110, false)
			if noDWARF && fromDWARF {
				if len(fr) != 1 || fr[0].Function != "outer" || fr[0].Line != 0 || loads != 0 {
					t.Errorf("NoDWARFLines, DWARF source: frames %+v, loads %d; want outer alone and no load", fr, loads)
				}
				continue
			}
			if len(fr) != 2 || fr[1].Function != "outer" || fr[1].Line != 9 || loads != 1 {
				t.Errorf("NoDWARFLines %v, DWARF source %v: frames %+v, loads %d; want the inlined call, then outer at a.c:9", noDWARF, fromDWARF, fr, loads)
			}
		}
	}
}
