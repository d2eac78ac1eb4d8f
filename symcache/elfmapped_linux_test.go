package symcache

import (
	"debug/elf"
	"os"
	"slices"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile"
)

// TestLoadELFMappedAsLoadELF checks that the Table LoadELFMapped builds
// with its names in the file's mapping is LoadELF's, symbol for symbol,
// on real objects (libc, python3, libpython, a C program).
func TestLoadELFMappedAsLoadELF(t *testing.T) {
	for _, path := range pcObjects(t) {
		img, full, _ := openPCObject(t, path)
		mapped, unmap, err := LoadELFMapped(img)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if mapped.Len() != full.Len() || !slices.Equal(mapped.ends, full.ends) || !slices.Equal(mapped.segments, full.segments) || mapped.HasLines() != full.HasLines() {
			t.Errorf("%s: %d functions, %d ends, lines %v; LoadELF: %d, %d, %v", path, mapped.Len(), len(mapped.ends), mapped.HasLines(), full.Len(), len(full.ends), full.HasLines())
		}
		named := 0
		for i := range min(mapped.Len(), full.Len()) {
			n, s := mapped.Symbol(i)
			wn, ws := full.Symbol(i)
			if n != wn || s != ws {
				t.Errorf("%s: function %d is %q at %#x; LoadELF: %q at %#x", path, i, n, s, wn, ws)
				break
			}
			if n != "" {
				named++
			}
		}
		if err := unmap(); err != nil {
			t.Errorf("%s: unmap: %v", path, err)
		}
		t.Logf("%s: %d functions, %d named", path, full.Len(), named)
	}
}

// TestLoadELFMappedLinesInPlace checks that the lines of a table
// LoadELFMapped built are read from its mapping, not from its file opened
// again: with the file removed before the first lookup, every address of
// a gcc -O2 -g program has the frames LoadELF's table gives it while its
// file is there (a file rewritten after the mapping is likewise never
// read against it).
func TestLoadELFMappedLinesInPlace(t *testing.T) {
	bin := buildInlineC(t)
	img := &images.Image{Path: bin, Format: images.FormatELF, Start: 0, Limit: 1 << 40}
	full, err := LoadELF(img)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	text := f.Section(".text")
	f.Close()
	var want [][]Frame
	for a := text.Addr; a < text.Addr+text.Size; a++ {
		want = append(want, full.lines.Lines(a))
	}
	defer objfile.RecoverFault(&err, objfile.PanicOnFault())
	mapped, unmap, err := LoadELFMapped(img)
	if err != nil {
		t.Fatal(err)
	}
	defer unmap()
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	lined := 0
	for i, a := 0, text.Addr; a < text.Addr+text.Size; i, a = i+1, a+1 {
		got := mapped.lines.Lines(a)
		if !slices.Equal(got, want[i]) {
			t.Fatalf("%#x: %+v, want %+v", a, got, want[i])
		}
		if len(got) > 0 && got[0].Line > 0 {
			lined++
		}
	}
	if lined == 0 {
		t.Fatal("no address has a line")
	}
}
