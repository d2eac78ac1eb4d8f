package images_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/images/dyldcachetest"
)

func buildCache(t *testing.T) *dyldcachetest.Cache {
	t.Helper()
	return dyldcachetest.Build(t, []string{images.MachOFixture("libdemo_arm64.dylib"), images.MachOFixture("libtwo_arm64.dylib")})
}

// symbolNames returns the names of st's entries.
func symbolNames(st *images.MachOSymbolTable) map[string]uint64 {
	out := map[string]uint64{}
	for i := 0; i < st.Len(); i++ {
		e := st.Entry(i)
		if n, ok := st.Name(e.Strx); ok {
			out[n] = e.Value
		}
	}
	return out
}

// TestLinkeditMemoryCacheLayout reads the symbol tables and function
// starts of dylibs laid out as in the dyld shared cache through
// LinkeditMemory: every export is found at its address, local __text
// symbols are "<redacted>", and no read falls in __TEXT past the load
// commands (the linkedit's file offsets overlap the first dylib's __TEXT
// file range).
func TestLinkeditMemoryCacheLayout(t *testing.T) {
	c := buildCache(t)
	for _, d := range c.Dylibs {
		rec := &dyldcachetest.Recorder{R: c.Mem}
		m, err := images.ReadMachOFromMemory(rec, d.Load)
		if err != nil {
			t.Fatal(err)
		}
		le, err := m.LinkeditMemory(rec, dyldcachetest.Slide)
		if err != nil {
			t.Fatal(err)
		}
		st, err := m.ReadSymbolTable(le, le.Size())
		if err != nil {
			t.Fatal(err)
		}
		names := symbolNames(st)
		for name, addr := range d.Exports {
			if got, ok := names["_"+name]; !ok || got != addr {
				t.Errorf("%s: export %s at %#x, want %#x (found %v)", d.Path, name, got, addr, ok)
			}
		}
		if _, ok := names[dyldcachetest.Redacted]; !ok {
			t.Errorf("%s: no %s symbol in memory", d.Path, dyldcachetest.Redacted)
		}
		starts, err := m.ReadFunctionStarts(le, le.Size(), nil)
		if err != nil || len(starts) < len(d.Exports)+len(d.Locals) {
			t.Errorf("%s: %d function starts (%v), want at least %d", d.Path, len(starts), err, len(d.Exports)+len(d.Locals))
		}
		for _, a := range starts {
			if a < d.TextAddr || a >= d.TextAddr+d.TextSize {
				t.Errorf("%s: function start %#x outside __TEXT", d.Path, a)
			}
		}
		if n := rec.Touching(d.Load+d.HeaderSize, d.Load+d.TextSize); n != 0 {
			t.Errorf("%s: %d reads of __TEXT as linkedit", d.Path, n)
		}
		if n := rec.Touching(c.Pool[0], c.Pool[1]); n != 1 {
			t.Errorf("%s: pool read %d times", d.Path, n)
		}
	}
}

// TestLinkeditMemoryErrors checks the errors of an image in memory whose
// linkedit cannot be found: no __LINKEDIT, or LC_SYMTAB offsets outside
// its file range.
func TestLinkeditMemoryErrors(t *testing.T) {
	c := buildCache(t)
	d := c.Dylibs[0]
	m, err := images.ReadMachOFromMemory(c.Mem, d.Load)
	if err != nil {
		t.Fatal(err)
	}
	noLE := *m
	noLE.Segments = nil
	for _, s := range m.Segments {
		if s.Name != "__LINKEDIT" {
			noLE.Segments = append(noLE.Segments, s)
		}
	}
	if _, err := noLE.LinkeditMemory(c.Mem, dyldcachetest.Slide); !errors.Is(err, images.ErrNoLinkedit) {
		t.Errorf("no __LINKEDIT: %v", err)
	}
	le, err := m.LinkeditMemory(c.Mem, dyldcachetest.Slide)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		st   images.MachOSymtab
	}{
		{"symoff before __LINKEDIT", images.MachOSymtab{SymOff: dyldcachetest.LinkeditFileOff - 16, NSyms: 1, StrOff: dyldcachetest.LinkeditFileOff, StrSize: 1}},
		{"stroff past __LINKEDIT", images.MachOSymtab{SymOff: dyldcachetest.LinkeditFileOff, NSyms: 1, StrOff: uint32(le.Size()) - 1, StrSize: 2}},
	} {
		bad := *m
		bad.Symtab = &tc.st
		_, err := bad.ReadSymbolTable(le, -1)
		if err == nil || !strings.Contains(err.Error(), "outside __LINKEDIT") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := le.Addr(dyldcachetest.LinkeditFileOff, uint64(le.Size())); err == nil {
		t.Error("Addr of a range running past __LINKEDIT: no error")
	}
	if a, err := le.Addr(dyldcachetest.LinkeditFileOff, 1); err != nil || a != c.Linkedit[0] {
		t.Errorf("Addr of __LINKEDIT's first byte: %#x, %v; want %#x", a, err, c.Linkedit[0])
	}
}

// TestDyldLocalSymbols parses the cache's .symbols file: each dylib's
// entry (keyed by its __TEXT address minus the cache base) gives its local
// nlists with their real names; a file of another UUID and an unknown
// dylib are errors.
func TestDyldLocalSymbols(t *testing.T) {
	c := buildCache(t)
	main, err := images.ReadDyldCacheHeader(bytes.NewReader(c.MainHeader()))
	if err != nil {
		t.Fatal(err)
	}
	if main.UUID != c.UUID || main.SymbolFileUUID != c.SymbolsUUID || main.BaseAddress != dyldcachetest.Base {
		t.Fatalf("main header %+v", main)
	}
	file := c.SymbolsFile(c.SymbolsUUID)
	l, err := images.OpenDyldLocalSymbols(bytes.NewReader(file), int64(len(file)), main.SymbolFileUUID)
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != len(c.Dylibs) {
		t.Errorf("%d entries, want %d", l.Len(), len(c.Dylibs))
	}
	for _, d := range c.Dylibs {
		st, err := l.Symbols(d.TextAddr - main.BaseAddress)
		if err != nil {
			t.Fatal(err)
		}
		names := symbolNames(st)
		if st.Len() != len(d.Locals) {
			t.Errorf("%s: %d locals, want %d", d.Path, st.Len(), len(d.Locals))
		}
		for _, loc := range d.Locals {
			if a, ok := names["_"+loc.Name]; !ok || a != loc.Addr {
				t.Errorf("%s: local %s at %#x, want %#x (found %v)", d.Path, loc.Name, a, loc.Addr, ok)
			}
		}
	}
	if _, err := l.Symbols(0x1234); !errors.Is(err, images.ErrNoLocalSymbols) {
		t.Errorf("unknown dylib: %v", err)
	}
	other := c.SymbolsFile([16]byte{1})
	if _, err := images.OpenDyldLocalSymbols(bytes.NewReader(other), int64(len(other)), main.SymbolFileUUID); !errors.Is(err, images.ErrDyldSymbolsMismatch) {
		t.Errorf("mismatched UUID: %v", err)
	}
}

// oldFormatSymbols returns a cache file of an old format holding its own
// local symbols: one local, _old_local at 0x7fff20001234, for the dylib at
// file offset 0x5000.
func oldFormatSymbols() []byte {
	le := binary.LittleEndian
	f := make([]byte, 0x200)
	copy(f, "dyld_v1  x86_64")
	le.PutUint32(f[16:], 0x100) // mappingOffset: an old, short header
	info := make([]byte, 24)
	nl := make([]byte, 16)
	le.PutUint32(nl, 1)
	nl[4], nl[5] = images.NSect, 1
	le.PutUint64(nl[8:], 0x7fff20001234)
	strs := []byte("\x00_old_local\x00")
	ent := make([]byte, 12)
	le.PutUint32(ent, 0x5000)
	le.PutUint32(ent[8:], 1)
	le.PutUint32(info[0:], 24)
	le.PutUint32(info[4:], 1)
	le.PutUint32(info[8:], 40)
	le.PutUint32(info[12:], uint32(len(strs)))
	le.PutUint32(info[16:], uint32(40+len(strs)))
	le.PutUint32(info[20:], 1)
	body := append(append(append(info, nl...), strs...), ent...)
	le.PutUint64(f[72:], uint64(len(f)))
	le.PutUint64(f[80:], uint64(len(body)))
	f = append(f, body...)
	return f
}

// TestDyldLocalSymbolsOldFormat parses the local symbols of a cache whose
// header predates symbolFileUUID: 32-bit entries keyed by file offset
// (dyld-1378 DyldSharedCache::forEachLocalSymbolEntry).
func TestDyldLocalSymbolsOldFormat(t *testing.T) {
	f := oldFormatSymbols()
	l, err := images.OpenDyldLocalSymbols(bytes.NewReader(f), int64(len(f)), [16]byte{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.Symbols(0x5000)
	if err != nil {
		t.Fatal(err)
	}
	if n := symbolNames(st); n["_old_local"] != 0x7fff20001234 {
		t.Errorf("names %v", n)
	}
}

// TestDyldLocalSymbolsHostile truncates the .symbols file at every length
// and corrupts each count: always an error or a result, never a panic,
// and a huge count fails before it allocates.
func TestDyldLocalSymbolsHostile(t *testing.T) {
	c := buildCache(t)
	file := c.SymbolsFile(c.SymbolsUUID)
	for n := 0; n < len(file); n++ {
		b := file[:n]
		if l, err := images.OpenDyldLocalSymbols(bytes.NewReader(b), int64(len(b)), c.SymbolsUUID); err == nil {
			for _, off := range l.DylibOffsets() {
				_, _ = l.Symbols(off)
			}
		}
	}
	info := binary.LittleEndian.Uint64(file[72:])
	for field := 0; field < 6; field++ {
		b := bytes.Clone(file)
		binary.LittleEndian.PutUint32(b[info+uint64(field)*4:], 0xfffffff0)
		if _, err := images.OpenDyldLocalSymbols(bytes.NewReader(b), int64(len(b)), c.SymbolsUUID); err == nil {
			t.Errorf("dyld_cache_local_symbols_info field %d = 0xfffffff0: no error", field)
		}
	}
	// An entry whose nlists run past the table.
	b := bytes.Clone(file)
	ents := info + uint64(binary.LittleEndian.Uint32(b[info+16:]))
	binary.LittleEndian.PutUint32(b[ents+12:], 0x7fffffff)
	l, err := images.OpenDyldLocalSymbols(bytes.NewReader(b), int64(len(b)), c.SymbolsUUID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Symbols(binary.LittleEndian.Uint64(b[ents:])); err == nil {
		t.Error("entry with 0x7fffffff nlists: no error")
	}
}

// TestDyldImagesSharedCache checks that DyldImages marks the dylibs whose
// header has MH_DYLIB_IN_CACHE with the shared cache UUID of the task's
// dyld_all_image_infos.
func TestDyldImagesSharedCache(t *testing.T) {
	c := buildCache(t)
	le := binary.LittleEndian
	const infosAddr, arrayAddr, pathsAddr = 0x7ff000000, 0x7ff100000, 0x7ff200000
	infos := make([]byte, images.DyldAllImageInfosSize)
	le.PutUint32(infos, 15)
	le.PutUint32(infos[images.DyldOffInfoArrayCount:], uint32(len(c.Dylibs)))
	le.PutUint64(infos[images.DyldOffInfoArray:], arrayAddr)
	copy(infos[images.DyldOffSharedCacheUUID:], c.UUID[:])
	var array, paths []byte
	for _, d := range c.Dylibs {
		e := make([]byte, images.DyldImageInfoSize)
		le.PutUint64(e, d.Load)
		le.PutUint64(e[8:], pathsAddr+uint64(len(paths)))
		array = append(array, e...)
		paths = append(paths, d.Path+"\x00"...)
	}
	c.Mem.Map(infosAddr, infos)
	c.Mem.Map(arrayAddr, array)
	c.Mem.Map(pathsAddr, paths)
	imgs, _, err := images.DyldImages(c.Mem, infosAddr, 0)
	if err != nil || len(imgs) != len(c.Dylibs) {
		t.Fatalf("%d images, %v", len(imgs), err)
	}
	for _, im := range imgs {
		if im.SharedCache != hex.EncodeToString(c.UUID[:]) {
			t.Errorf("%s: SharedCache %q", im.Path, im.SharedCache)
		}
	}
}
