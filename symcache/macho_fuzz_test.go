package symcache_test

import (
	"bytes"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/symcache"
)

// FuzzMachOTable builds Tables from arbitrary Mach-O bytes, as a file (read
// through ReadAt, and in place with a Go binary's lines) and from memory,
// and looks addresses up in them: nothing may panic or allocate without
// bound. Seeds: testdata/fuzz/FuzzMachOTable (the images
// package's FuzzMachO seeds: a real dylib, its load commands alone, a
// cmdsize 0, a 32-bit header, a universal header).
func FuzzMachOTable(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := images.ReadMachO(bytes.NewReader(data), int64(len(data)))
		if err == nil {
			if tab, err := symcache.MachOTable("fuzz", m, bytes.NewReader(data), int64(len(data)), nil); err == nil {
				lookAround(tab, m)
			}
			if tab, err := symcache.MachOTableInPlace("fuzz", m, data); err == nil {
				lookAround(tab, m)
			}
		}
		mem := &fixture.Memory{}
		mem.Map(0x7000_0000, data)
		img, err := images.MachOImageFromMemory(mem, 0x7000_0000, "/nonexistent/fuzz")
		if err != nil {
			return
		}
		cache := symcache.New(symcache.Options{})
		for _, a := range []uint64{img.Start, img.Start + 1, (img.Start + img.Limit) / 2, img.Limit - 1} {
			if fr := cache.Symbolize(img, a, true); len(fr) == 0 {
				t.Fatalf("no frame for %#x", a)
			}
		}
	})
}

func lookAround(tab *symcache.Table, m *images.MachO) {
	for _, s := range m.Sections {
		for _, a := range []uint64{s.Addr, s.Addr + s.Size/2, s.Addr + s.Size} {
			tab.Lookup(a)
			tab.OuterLine(a)
		}
	}
	tab.Lookup(0)
	tab.Lookup(^uint64(0))
}
