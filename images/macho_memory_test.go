package images_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/fixture"
)

// TestMachOHostileInMemory maps each of TestMachOHostile's Mach-Os in
// memory: reading it from there is still an error, never a panic.
func TestMachOHostileInMemory(t *testing.T) {
	for _, c := range images.HostileMachOs(t) {
		mem := &fixture.Memory{}
		mem.Map(0x10000, c.Data)
		if im, err := images.MachOImageFromMemory(mem, 0x10000, "x"); err == nil {
			mm, _ := images.ReadMachOFromMemory(mem, 0x10000)
			le, err := mm.LinkeditMemory(mem, im.Start-mm.Text().Addr)
			if err != nil {
				continue
			}
			_, err1 := mm.ReadSymbolTable(le, le.Size())
			_, err2 := mm.ReadFunctionStarts(le, le.Size(), nil)
			if err1 == nil && err2 == nil {
				t.Errorf("%s: no error from memory", c.Name)
			}
		}
	}
}

// sameSymbols reports whether two symbol tables hold the same entries and
// strings.
func sameSymbols(a, b *images.MachOSymbolTable) bool {
	asyms, astrs := images.SymbolTableContents(a)
	bsyms, bstrs := images.SymbolTableContents(b)
	return bytes.Equal(astrs, bstrs) && bytes.Equal(asyms, bsyms)
}

func TestMachOImageFromMemory(t *testing.T) {
	for _, name := range []string{"prog_arm64", "libdemo_x86_64.dylib"} {
		f, err := images.OpenMachO(images.MachOFixture(name), "")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		const slide = 0x3a5c000
		mem := &fixture.Memory{}
		mem.MapMachO(t, images.MachOFixture(name), slide)
		load := f.Text().Addr + slide
		im, err := images.MachOImageFromMemory(mem, load, "/usr/lib/"+name)
		if err != nil {
			t.Fatal(err)
		}
		want := images.Image{Path: "/usr/lib/" + name, BuildID: f.UUIDString(), Format: images.FormatMachO, Start: load,
			Limit: load + f.Text().Size, LoadAddress: load, Memory: mem}
		if *im != want {
			t.Errorf("%s: image %+v, want %+v", name, *im, want)
		}
		m, err := images.ReadMachOFromMemory(mem, load)
		if err != nil {
			t.Fatal(err)
		}
		le, err := m.LinkeditMemory(mem, slide)
		if err != nil {
			t.Fatal(err)
		}
		r, size := io.ReaderAt(le), le.Size()
		fromMem, err := m.ReadSymbolTable(r, size)
		if err != nil {
			t.Fatal(err)
		}
		fromFile, err := f.ReadSymbolTable(f.R, f.Size)
		if err != nil {
			t.Fatal(err)
		}
		if fromMem.Len() != fromFile.Len() || !sameSymbols(fromMem, fromFile) {
			t.Errorf("%s: symbol table from memory differs from the file's", name)
		}
		s1, err1 := m.ReadFunctionStarts(r, size, nil)
		s2, err2 := f.ReadFunctionStarts(f.R, f.Size, nil)
		if err1 != nil || err2 != nil || len(s1) != len(s2) || len(s1) == 0 {
			t.Errorf("%s: function starts %d (%v) from memory, %d (%v) from file", name, len(s1), err1, len(s2), err2)
		}
	}
	if _, err := images.MachOImageFromMemory(&fixture.Memory{}, 0x1000, "x"); err == nil || !strings.Contains(err.Error(), "not mapped") {
		t.Errorf("unmapped header: %v", err)
	}
}
