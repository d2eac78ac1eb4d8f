package images_test

import (
	"bytes"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/fixture"
)

// FuzzMachO feeds arbitrary bytes to every Mach-O entry point, as a file
// and as an image in memory. Nothing may panic, hang or allocate much more
// than the input; errors are expected. The seed corpus in
// testdata/fuzz/FuzzMachO holds a real dylib, its load commands alone, a
// cmdsize 0, a 32-bit header and a universal header (written by a
// throwaway generator from the fixtures; small seeds keep minimization fast).
func FuzzMachO(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = images.ParseMachO(data)
		mf, err := images.NewMachOFile(bytes.NewReader(data), int64(len(data)), func(*images.MachO) bool { return true }, true, "any")
		if err == nil {
			if mf.Symtab != nil {
				if st, err := mf.ReadSymbolTable(mf.R, mf.Size); err == nil {
					for i := 0; i < st.Len() && i < 1000; i++ {
						st.Name(st.Entry(i).Strx)
					}
				}
			}
			_, _ = mf.ReadFunctionStarts(mf.R, mf.Size, nil)
		}
		mem := &fixture.Memory{}
		mem.Map(0x100000000, data)
		im, err := images.MachOImageFromMemory(mem, 0x100000000, "fuzz")
		if err != nil {
			return
		}
		if im.Limit < im.Start {
			t.Fatalf("image limit %#x below start %#x", im.Limit, im.Start)
		}
		m, err := images.ReadMachOFromMemory(mem, 0x100000000)
		if err != nil {
			t.Fatalf("image read, then header not: %v", err)
		}
		slide, err := m.Slide(0x100000000)
		if err != nil {
			return
		}
		le, err := m.LinkeditMemory(mem, slide)
		if err != nil {
			return
		}
		if m.Symtab != nil {
			_, _ = m.ReadSymbolTable(le, le.Size())
		}
		_, _ = m.ReadFunctionStarts(le, le.Size(), nil)
	})
}

// FuzzDyldImageInfos decodes arbitrary bytes mapped at 0x1000 as a
// dyld_all_image_infos at 0x1000, its image array and its images. The
// seeds in testdata/fuzz/FuzzDyldImageInfos put the struct, an image array
// with a self-reference, a repeat and an unterminated path, a uuid array
// and dyld's path in one block (versions 15 and 1, and a huge count).
func FuzzDyldImageInfos(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := &fixture.Memory{}
		mem.Map(0x1000, data)
		infos, err := images.ReadDyldAllImageInfos(mem, 0x1000)
		if err != nil {
			return
		}
		list, _ := images.ReadDyldImageInfos(mem, infos, 64)
		if len(list) > 64 {
			t.Fatalf("%d images read with a limit of 64", len(list))
		}
		for _, d := range list {
			if d.LoadAddress == 0 || len(d.FilePath) >= images.MaxDyldPath {
				t.Fatalf("bad entry %+v", d)
			}
		}
		imgs, _, _ := images.DyldImages(mem, 0x1000, 64)
		if len(imgs) > 65 {
			t.Fatalf("%d images with a limit of 64", len(imgs))
		}
	})
}
