package symcache

import (
	"bytes"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile"
)

// MachOOptions configures MachOLoader.
type MachOOptions struct {
	// DSYM is a dSYM bundle (X.dSYM), or the DWARF file inside one
	// (X.dSYM/Contents/Resources/DWARF/X), to take file:line from. When
	// empty, <file>.dSYM beside the image's file is tried.
	DSYM string
	// NoDSYM turns off DWARF lookup in a dSYM.
	NoDSYM bool
	// Pools, when non-nil, shares the string tables of images read from
	// memory between the images of one task that name the same one (the
	// dyld shared cache's per-subcache pool). Nil: each image reads its
	// own.
	Pools *StringPools
	// SharedCacheDirs are searched for the dyld shared cache an image
	// read from memory belongs to (Image.SharedCache), to name its local
	// symbols from the cache's .symbols file. Nil means
	// DefaultSharedCacheDirs; an empty, non-nil slice turns the lookup off.
	SharedCacheDirs []string
	// DWARFOnly takes lines from DWARF only (the dSYM, else the file's
	// own __DWARF segment), never from a Go binary's pclntab, which is
	// otherwise preferred for Go: it is smaller and quicker to read and
	// has the same lines and inlined calls.
	DWARFOnly bool
}

// LoadMachO builds the Table of a Mach-O image, with the default
// MachOOptions: see MachOLoader.
func LoadMachO(img *images.Image) (*Table, error) {
	return loadMachO(img, MachOOptions{}, nil)
}

// MachOLoader returns a Loader for Mach-O images. With img.Memory set, the
// header and __LINKEDIT are read from the target's memory at
// img.LoadAddress (img.Start when zero), because images in the dyld shared
// cache have no file of their own; otherwise img.File() is read (in a
// universal file, the slice whose UUID is img.BuildID).
//
// Lines are read lazily, on the first lookup that needs them: from a dSYM
// whose UUID matches, else (for an image with a file of its own, the slice
// whose UUID matches) from a Go binary's __gopclntab, else from DWARF in
// the file itself (the __DWARF segment a Go linker writes).
//
// Symbols are LC_SYMTAB's text symbols (not stabs, not
// REFERENCED_DYNAMICALLY) with one leading underscore dropped, plus every
// LC_FUNCTION_STARTS entry as an anonymous start, so that a stripped
// function is named image+0xSTART rather than after its neighbour.
// Offsets are from __TEXT's start, as images.Image uses for Mach-O.
//
// A dylib of the dyld shared cache has its local functions named
// "<redacted>" in memory: those names count as none, and the real ones
// come from the cache's .symbols file when one matching the image's cache
// is found in o.SharedCacheDirs (else the in-memory exports and function
// starts name what they can).
//
// When the task's memory is gone (it exited), an image is read from the
// file dyld named if its LC_UUID matches, else, for a dylib of the shared
// cache, from the cache's files in o.SharedCacheDirs: the main file whose
// UUID is img.SharedCache and its subcaches.
func MachOLoader(o MachOOptions) Loader {
	dirs := o.SharedCacheDirs
	if dirs == nil {
		dirs = DefaultSharedCacheDirs
	}
	locals := newCacheLocals(dirs)
	return func(img *images.Image) (*Table, error) { return loadMachO(img, o, locals) }
}

// dsymLines returns the lazy LineSource of the dSYM for an image with UUID
// uuid at file (o.DSYM, else file.dSYM), or nil when there is none.
func dsymLines(o MachOOptions, file, uuid string) LineSource {
	if o.NoDSYM || uuid == "" {
		return nil
	}
	dsym := o.DSYM
	if dsym == "" {
		dsym = file + ".dSYM"
	}
	if _, err := os.Stat(dsym); err != nil {
		return nil
	}
	return newLazyDWARF(func() (LineSource, error) {
		l, err := OpenDSYM(dsym, uuid)
		if err != nil {
			return nil, err
		}
		return l, nil
	})
}

// loadMachO builds img's Table with options o (see MachOLoader); locals,
// when non-nil, finds shared-cache local symbols.
func loadMachO(img *images.Image, o MachOOptions, locals *cacheLocals) (*Table, error) {
	object := filepath.Base(img.Path)
	if img.Memory == nil {
		return loadMachOFile(img, object, o)
	}
	t, err := loadMachOMemory(img, object, o, locals)
	if err != nil && img.BuildID != "" {
		// The task's memory is gone (xnu unmaps it as the process
		// exits) or unreadable: the file dyld named, if it still holds
		// an image with the same UUID, has the same tables.
		if ft, ferr := loadMachOFile(img, object, o); ferr == nil {
			return ft, nil
		}
	}
	if err != nil && locals != nil && img.SharedCache != "" {
		// A dylib of the dyld shared cache has no file of its own: the
		// cache's files on disk hold the same bytes, unslid.
		if ct, cerr := loadMachOSharedCache(img, object, o, locals); cerr == nil {
			return ct, nil
		}
	}
	return t, err
}

// loadMachOSharedCache builds the Table of img, a dylib of the dyld shared
// cache img.SharedCache, from that cache's files on disk: the dylib is
// found in the cache's image list by path (else by UUID), and the cache
// is read as the task saw it, slid by img's load address minus the
// dylib's unslid one.
func loadMachOSharedCache(img *images.Image, object string, o MachOOptions, locals *cacheLocals) (*Table, error) {
	c, err := locals.diskCache(img.SharedCache)
	if err != nil {
		return nil, err
	}
	unslid, err := c.FindImage(img.Path, img.BuildID)
	if err != nil {
		return nil, fmt.Errorf("symcache: %w", err)
	}
	load := img.LoadAddress
	if load == 0 {
		load = img.Start
	}
	mem := c.Memory(load - unslid)
	m, err := images.ReadMachOFromMemory(mem, load)
	if err != nil {
		return nil, fmt.Errorf("symcache: %s in the shared cache on disk: %w", img.Path, err)
	}
	if m.Flags&images.MHDylibInCache == 0 {
		return nil, fmt.Errorf("symcache: %s in the shared cache on disk lacks MH_DYLIB_IN_CACHE", img.Path)
	}
	ci := *img
	ci.Memory = mem
	return loadMachOMemory(&ci, object, o, locals)
}

// loadMachOFile builds the Table of img from its file (in a universal
// file, the slice whose UUID is img.BuildID).
func loadMachOFile(img *images.Image, object string, o MachOOptions) (*Table, error) {
	f, err := images.OpenMachOUUID(img.File(), img.BuildID)
	if err != nil {
		return nil, fmt.Errorf("symcache: %w", err)
	}
	defer f.Close()
	return loadMachOFileIn(img, object, o, f, nil)
}

// LoadMachOMapped is MachOLoader(o)'s load of img, with the string table
// and a Go binary's __gopclntab read in place from a read-only mapping of
// its file, not copied to the heap (where a one-shot symbolization paid
// for the pages they filled, and the copy). The table's names and line
// tables lie in the mapping: every lookup must run with objfile.PanicOnFault set,
// and unmap, called once the table is no longer used, releases it. An
// image read from memory, or a file that cannot be mapped, is loaded as
// MachOLoader loads it (unmap then does nothing).
func LoadMachOMapped(img *images.Image, o MachOOptions) (t *Table, unmap func() error, err error) {
	unmap = func() error { return nil }
	if img.Memory != nil {
		t, err = loadMachO(img, o, nil)
		return t, unmap, err
	}
	defer objfile.RecoverFault(&err, objfile.PanicOnFault())
	f, err := images.OpenMachOUUID(img.File(), img.BuildID)
	if err != nil {
		return nil, unmap, fmt.Errorf("symcache: %w", err)
	}
	defer f.Close()
	m, image := mapMachO(f)
	if t, err = loadMachOFileIn(img, filepath.Base(img.Path), o, f, image); err != nil || m == nil {
		m.Close()
		return t, unmap, err
	}
	return t, m.Close, nil
}

// mapMachO maps the file f was read from and returns the mapping and f's
// image in it (a universal file's slice); nil where it cannot be mapped.
func mapMachO(f *images.MachOFile) (*objfile.Mapping, machOBytes) {
	r, base := f.R, int64(0)
	if sr, ok := r.(*io.SectionReader); ok {
		r, base, _ = sr.Outer()
	}
	file, ok := r.(*os.File)
	if !ok || f.Size <= 0 {
		return nil, nil
	}
	size, _, err := objfile.DataSize(file)
	if err != nil || base < 0 || base+f.Size > size {
		return nil, nil
	}
	m, err := objfile.Map(file, size, f.Size)
	if err != nil {
		return nil, nil
	}
	image, err := m.Bytes(uint64(base), uint64(f.Size))
	if err != nil {
		m.Close()
		return nil, nil
	}
	return m, image
}

// machOBytes is a Mach-O image in memory (a file's mapping), read in place
// by machOTable and machOGoLines rather than through ReadAt's copies.
type machOBytes []byte

func (b machOBytes) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// InPlace returns the n bytes at off, or false past the end: the symbol
// table and function starts are read in place (images.InPlaceReader).
func (b machOBytes) InPlace(off, n uint64) ([]byte, bool) { return b.slice(off, n) }

// slice returns the n bytes at off, or false past the end.
func (b machOBytes) slice(off, n uint64) ([]byte, bool) {
	if off > uint64(len(b)) || n > uint64(len(b))-off {
		return nil, false
	}
	return b[off : off+n : off+n], true
}

// machOInPlace is the machOSource of m, an image whose bytes are image:
// its symbol and string tables, function starts and sections are read in
// place.
func machOInPlace(m *images.MachO, image machOBytes) machOSource {
	size := int64(len(image))
	src := machOSource{linkedit: image, linkeditSize: size, sections: image, sectionsSize: size, inPlace: true}
	if st := m.Symtab; st != nil {
		src.strings = func() ([]byte, error) {
			b, ok := image.slice(uint64(st.StrOff), uint64(st.StrSize))
			if !ok {
				return nil, fmt.Errorf("macho: LC_SYMTAB: %d-byte string table at %#x runs past the end of the %d-byte image", st.StrSize, st.StrOff, len(image))
			}
			return b, nil
		}
	}
	return src
}

// loadMachOFileIn is loadMachOFile with f, the image's file, and, when not
// nil, image, its bytes mapped: the string table and __gopclntab are then
// read in place.
func loadMachOFileIn(img *images.Image, object string, o MachOOptions, f *images.MachOFile, image machOBytes) (*Table, error) {
	lines := dsymLines(o, img.File(), f.UUIDString())
	src := machOSource{linkedit: f.R, linkeditSize: f.Size, sections: f.R, sectionsSize: f.Size}
	if image != nil {
		src = machOInPlace(f.MachO, image)
	}
	t, isGo, err := machOTable(object, f.MachO, src, lines)
	if err != nil {
		return nil, fmt.Errorf("symcache: %s: %w", img.File(), err)
	}
	if t.lines == nil {
		if image != nil && isGo && !o.DWARFOnly {
			t.lines = machOMappedGoLines(img.File(), f.MachO, image, machOHasDWARF(f.MachO), f.UUIDString())
		} else {
			t.lines = machOFileLines(img.File(), f.UUIDString(), isGo, machOHasDWARF(f.MachO), o.DWARFOnly)
		}
	}
	return t, nil
}

// loadMachOMemory builds the Table of an image read from its target's
// memory.
func loadMachOMemory(img *images.Image, object string, o MachOOptions, locals *cacheLocals) (*Table, error) {
	addr := img.LoadAddress
	if addr == 0 {
		addr = img.Start
	}
	m, err := images.ReadMachOFromMemory(img.Memory, addr)
	if err != nil {
		return nil, fmt.Errorf("symcache: %s: %w", img.Path, err)
	}
	if img.BuildID != "" && m.UUIDString() != "" && m.UUIDString() != img.BuildID {
		return nil, fmt.Errorf("symcache: %s: image at %#x has UUID %s, want %s", img.Path, addr, m.UUIDString(), img.BuildID)
	}
	slide, err := m.Slide(addr)
	if err != nil {
		return nil, fmt.Errorf("symcache: %s: %w", img.Path, err)
	}
	le, err := m.LinkeditMemory(img.Memory, slide)
	if err != nil {
		return nil, fmt.Errorf("symcache: %s (from memory at %#x): %w", img.Path, addr, err)
	}
	src := machOSource{linkedit: le, linkeditSize: le.Size()}
	src.sections, src.sectionsSize = m.MemoryFile(img.Memory, slide)
	if o.Pools != nil && m.Symtab != nil {
		st := *m.Symtab
		src.strings = func() ([]byte, error) {
			at, err := le.Addr(uint64(st.StrOff), uint64(st.StrSize))
			if err != nil {
				return nil, err
			}
			return o.Pools.get(img.Memory, at, uint64(st.StrSize), func() ([]byte, error) {
				return images.ReadLinkeditBlob(le, uint64(st.StrOff), uint64(st.StrSize), "macho: string table")
			})
		}
	}
	if locals != nil && img.SharedCache != "" && m.Flags&images.MHDylibInCache != 0 {
		src.locals = func() (*images.MachOSymbolTable, error) { return locals.symbols(img.SharedCache, m) }
	}
	// A dSYM may sit beside the image's file (an app's own binary
	// built with debug information); its UUID must match.
	var lines LineSource
	if m.HasUUID {
		lines = dsymLines(o, img.File(), m.UUIDString())
	}
	t, isGo, err := machOTable(object, m, src, lines)
	if err != nil {
		return nil, fmt.Errorf("symcache: %s (from memory at %#x): %w", img.Path, addr, err)
	}
	// An app's own binary has its file: lines come from there.
	if t.lines == nil && m.HasUUID && fileExists(img.File()) {
		t.lines = machOFileLines(img.File(), m.UUIDString(), isGo, machOHasDWARF(m), o.DWARFOnly)
	}
	return t, nil
}

// DSYMFile returns the DWARF file of a dSYM: path itself when it is a file,
// else the one file in path/Contents/Resources/DWARF (the one named like the
// bundle, without .dSYM, when there are several).
func DSYMFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("dSYM: %w", err)
	}
	if !st.IsDir() {
		return path, nil
	}
	dir := filepath.Join(path, "Contents", "Resources", "DWARF")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("dSYM: %s is not a dSYM bundle: %w", path, err)
	}
	want := strings.TrimSuffix(filepath.Base(path), ".dSYM")
	var files []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			if e.Name() == want {
				return filepath.Join(dir, e.Name()), nil
			}
			files = append(files, e.Name())
		}
	}
	if len(files) == 1 {
		return filepath.Join(dir, files[0]), nil
	}
	return "", fmt.Errorf("dSYM: %s holds %d DWARF files, none named %s", dir, len(files), want)
}

// MachOTable builds the Table of a Mach-O image whose file offsets r reads
// (a file slice); size bounds the offsets (< 0: unknown). lines, when
// non-nil, adds file:line.
func MachOTable(object string, m *images.MachO, r io.ReaderAt, size int64, lines LineSource) (*Table, error) {
	t, _, err := machOTable(object, m, machOSource{linkedit: r, linkeditSize: size, sections: r, sectionsSize: size}, lines)
	return t, err
}

// machOSource says where machOTable reads an image's parts.
type machOSource struct {
	// linkedit reads __LINKEDIT blobs by file offset, up to linkeditSize.
	linkedit     io.ReaderAt
	linkeditSize int64
	// sections reads section contents by file offset (__gopclntab).
	sections     io.ReaderAt
	sectionsSize int64
	// strings, when non-nil, returns the string table, shared with
	// other images.
	strings func() ([]byte, error)
	// inPlace says that strings returns the string table of a mapping
	// that lives as long as the table.
	inPlace bool
	// locals, when non-nil, returns the image's local symbols from the
	// shared cache's .symbols file.
	locals func() (*images.MachOSymbolTable, error)
}

// machOTable is MachOTable, also telling whether the image is a Go binary
// (has a __gopclntab).
func machOTable(object string, m *images.MachO, src machOSource, lines LineSource) (*Table, bool, error) {
	text := m.Text()
	if text == nil {
		return nil, false, fmt.Errorf("%s: no __TEXT segment", object)
	}
	starts, serr := m.ReadFunctionStarts(src.linkedit, src.linkeditSize, nil)
	var syms []Symbol
	if m.Symtab != nil && m.Symtab.NSyms > 0 {
		var strs []byte
		if src.strings != nil {
			var err error
			if strs, err = src.strings(); err != nil {
				return nil, false, err
			}
		}
		st, err := m.ReadSymbolTableStrings(src.linkedit, src.linkeditSize, strs)
		if err != nil {
			return nil, false, err
		}
		if pcln, _ := machOPclntab(m); src.inPlace && src.locals == nil && pcln == nil {
			// Names up to the table's last NUL (past it, none).
			if strs := strs[:bytes.LastIndexByte(strs, 0)+1]; len(strs) <= refOffset+1 {
				t := &Table{Object: object, segments: machOTableSegments(m, text), lines: lines}
				t.strs[0] = unsafe.String(unsafe.SliceData(strs), len(strs))
				c, funcs := machOSymbolCols(m, st, t.strs[0])
				if serr != nil && funcs == 0 {
					return nil, false, serr
				}
				t.fromCols(&c, starts)
				return t, false, nil
			}
		}
		syms = machOSymbols(m, st, nil, src.inPlace)
	}
	if src.locals != nil {
		// A missing or mismatched .symbols file leaves the in-memory
		// exports and function starts to name what they can.
		if st, err := src.locals(); err == nil {
			syms = machOSymbols(m, st, syms, false)
		}
	}
	// A Go binary linked with -s: name its functions from __gopclntab.
	gs, gl, isGo, err := machOGopclntab(m, src.sections, src.sectionsSize, syms)
	if err == nil && gl != nil {
		syms = gs
		if lines == nil {
			lines = gl
		}
	}
	if serr != nil && len(syms) == 0 {
		return nil, false, serr
	}
	machOSectionBounds(m, func(addr uint64) { syms = append(syms, Symbol{Start: addr}) })
	return NewTableWithStarts(object, syms, starts, machOTableSegments(m, text), lines), isGo, nil
}

// machOTableSegments returns the Segments of m's table: offsets from the
// start of text, its __TEXT segment.
func machOTableSegments(m *images.MachO, text *images.MachOSegment) []Segment {
	var segs []Segment
	for _, s := range m.Segments {
		if s.Size > 0 && s.Addr >= text.Addr {
			segs = append(segs, Segment{Offset: s.Addr - text.Addr, Addr: s.Addr, Size: s.Size})
		}
	}
	if len(segs) == 0 {
		// A __TEXT of size 0: keep offsets from meaning addresses.
		segs = append(segs, Segment{Addr: text.Addr})
	}
	return segs
}

// redacted is the name the dyld shared cache builder gives every local
// __text symbol it moves to the .symbols file (dyld-1378
// cache_builder/NewSharedCacheBuilder.cpp, "change __text symbols to
// "<redacted>" so backtraces don't have bogus names"): no name at all.
const redacted = "<redacted>"

// machOSymbols appends the function symbols of st to dst. Their names are
// copied out of st's string table into one allocation of their own, so
// that the table (a shared cache's whole string pool) is not kept alive by
// them; with inPlace, where the string table is a file's mapping, which
// lives as long as the symbols, they are views of it. dst is grown once,
// to hold them and two more for each section (the bounds machOTable
// appends).
func machOSymbols(m *images.MachO, st *images.MachOSymbolTable, dst []Symbol, inPlace bool) []Symbol {
	// symbolName is a function's name as the table keeps it: without
	// the leading '_', nil for none (or "<redacted>").
	symbolName := func(name []byte, ok bool) []byte {
		if !ok || len(name) == 0 || string(name) == redacted {
			return nil
		}
		if name[0] == '_' {
			name = name[1:]
		}
		return name
	}
	// dst is first grown to its final length (and room for the
	// section bounds machOTable adds), from a count of the function
	// symbols: each 2 MiB of fresh heap is one a one-shot
	// symbolization pays for. The count marks them in a bitmap, which
	// the passes that follow walk.
	isFunc, count := machOFunctionSet(m, st)
	dst = slices.Grow(dst, count+2*len(m.Sections))
	first := len(dst)
	if inPlace {
		// One pass: the names stay in the mapped string table. What
		// the scans read is bounded as the copies are below: past
		// the limit, the table is left out.
		total := 0
		for w, word := range isFunc {
			for ; word != 0; word &= word - 1 {
				// Its name is found by a scan from its
				// offset to its NUL, not by EntryName
				// (which first sorts every entry by
				// offset: most of a one-pass read of a Go
				// binary's 8,000 symbols).
				strx, _, _, _, value := st.EntryFields(w*64 + bits.TrailingZeros64(word))
				name := symbolName(st.NameBytes(strx))
				if total += len(name); total > 2*st.StringBytes()+1<<20 {
					return dst[:first]
				}
				s := Symbol{Start: value}
				if len(name) > 0 {
					s.Name = TrimGoABI(unsafe.String(&name[0], len(name)))
				}
				dst = append(dst, s)
			}
		}
		return dst
	}
	// Names found by EntryName: one pass over the string table for all
	// of them.
	total := 0
	for w, word := range isFunc {
		for ; word != 0; word &= word - 1 {
			name := symbolName(st.EntryName(w*64 + bits.TrailingZeros64(word)))
			total += len(name)
		}
	}
	// A linker may let names share a tail, not make each of millions of
	// names a long view of one run: names of more bytes than this are a
	// hostile table, whose symbols are left out rather than copied.
	if total > 2*st.StringBytes()+1<<20 {
		return dst
	}
	var b strings.Builder
	b.Grow(total)
	ends := make([]int32, 0, count)
	for w, word := range isFunc {
		for ; word != 0; word &= word - 1 {
			i := w*64 + bits.TrailingZeros64(word)
			_, _, _, _, value := st.EntryFields(i)
			b.Write(symbolName(st.EntryName(i)))
			ends = append(ends, int32(b.Len()))
			// A "<redacted>" local keeps its start, anonymous:
			// the function is then named image+0xOFFSET, not
			// after its neighbour.
			dst = append(dst, Symbol{Start: value})
		}
	}
	all := b.String()
	prev := int32(0)
	for k, end := range ends {
		dst[first+k].Name = TrimGoABI(all[prev:end])
		prev = end
	}
	return dst
}

// machOFunctionSet returns a bitmap of the entries of st that are
// function symbols of m (text symbols of a section of instructions, not
// stabs, not REFERENCED_DYNAMICALLY), and their count: what is made for
// them is then made once, of its final size (swiftlint's 532,170 entries
// are 82,441 functions), and the passes that follow read the functions'
// entries alone. Each entry's fields are read one by one (EntryFields),
// not as a Nlist64, which the compiler builds in memory and reads back
// whole (a stalled load: most of the loop's time).
func machOFunctionSet(m *images.MachO, st *images.MachOSymbolTable) (isFunc []uint64, count int) {
	type sect struct {
		lo, hi uint64
		code   bool
	}
	sects := make([]sect, len(m.Sections))
	for i := range m.Sections {
		s := &m.Sections[i]
		sects[i] = sect{s.Addr, s.Addr + s.Size, s.Instructions()}
	}
	n := st.Len()
	isFunc = make([]uint64, (n+63)/64)
	for i := 0; i < n; i++ {
		_, typ, sec, desc, value := st.EntryFields(i)
		if typ&images.NStab != 0 || typ&images.NType != images.NSect {
			continue
		}
		if sec == 0 || int(sec) > len(sects) {
			continue
		}
		s := &sects[sec-1]
		if !s.code || value < s.lo || value >= s.hi || desc&images.ReferencedDynamically != 0 {
			continue
		}
		isFunc[i/64] |= 1 << (i % 64)
		count++
	}
	return isFunc, count
}

// machOSymbolCols returns the function symbols of st (as machOSymbols
// finds them), then an anonymous one at each bound of each section of
// instructions (machOSectionBounds), as columns for Table.fromCols:
// each name is a nameRef with refMachO, its entry's offset in strs, st's
// string table up to its last NUL (an offset outside strs is none): no
// byte of a name is read here, not even its first (a cache miss each,
// most of the time here when it was), but when the function is looked up
// or shares its start with another (machONameRef). len(strs) must be at
// most refOffset+1. funcs is the number of function symbols.
func machOSymbolCols(m *images.MachO, st *images.MachOSymbolTable, strs string) (c symCols, funcs int) {
	isFunc, count := machOFunctionSet(m, st)
	n := count + 2*len(m.Sections)
	c = symCols{starts: make([]uint64, 0, 2*n), sizes: make([]uint64, 0, n), refs: make([]uint32, 0, n)}
	for w, word := range isFunc {
		for ; word != 0; word &= word - 1 {
			strx, _, _, _, value := st.EntryFields(w*64 + bits.TrailingZeros64(word))
			ref := uint32(noName)
			if uint64(strx) < uint64(len(strs)) {
				ref = refMachO | strx
			}
			c.add(value, 0, ref)
		}
	}
	machOSectionBounds(m, func(addr uint64) { c.add(addr, 0, noName) })
	return c, count
}

// machOSectionBounds calls f with the start and the end of each section of
// instructions of m, which a table keeps as anonymous starts: an address
// in __stubs, say, is then not taken for the last function of __text.
func machOSectionBounds(m *images.MachO, f func(addr uint64)) {
	for i := range m.Sections {
		if s := &m.Sections[i]; s.Instructions() && s.Size > 0 {
			f(s.Addr)
			f(s.Addr + s.Size)
		}
	}
}

// machONameRef is the nameRef of the name at strx in strs (a string table
// ending in a NUL), as machOSymbols keeps it: past one leading '_', noName
// for none, "<redacted>" or an offset outside strs. It reads no more than
// the name's first bytes.
func machONameRef(strs string, strx uint32) uint32 {
	if uint64(strx) >= uint64(len(strs)) {
		return noName
	}
	switch strs[strx] {
	case 0:
		return noName
	case '_':
		// strs ends in a NUL: strx+1 is inside it.
		if strs[strx+1] == 0 {
			return noName
		}
		return strx + 1
	case '<':
		if strings.HasPrefix(strs[strx:], redacted+"\x00") {
			return noName
		}
	}
	return strx
}
