package symcache

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/macprof/macprof/images"
)

// MachOOptions configures MachOLoader.
type MachOOptions struct {
	// DSYM is a dSYM bundle (X.dSYM), or the DWARF file inside one
	// (X.dSYM/Contents/Resources/DWARF/X), to take file:line from. When
	// empty, <file>.dSYM beside the image's file is tried.
	DSYM string
	// NoDSYM turns off DWARF lookup in a dSYM.
	NoDSYM bool
	// DWARFOnly takes lines from DWARF only (the dSYM, else the file's
	// own __DWARF segment), never from a Go binary's pclntab, which is
	// otherwise preferred for Go: it is smaller and quicker to read and
	// has the same lines and inlined calls.
	DWARFOnly bool
}

// LoadMachO builds the Table of a Mach-O image, with the default
// MachOOptions: see MachOLoader.
func LoadMachO(img *images.Image) (*Table, error) {
	return loadMachO(img, MachOOptions{})
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
func MachOLoader(o MachOOptions) Loader {
	return func(img *images.Image) (*Table, error) { return loadMachO(img, o) }
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
	return newLazyLines(func() (LineSource, error) {
		l, err := OpenDSYM(dsym, uuid)
		if err != nil {
			return nil, err
		}
		return l, nil
	})
}

// loadMachO builds img's Table with options o (see MachOLoader).
func loadMachO(img *images.Image, o MachOOptions) (*Table, error) {
	object := filepath.Base(img.Path)
	if img.Memory != nil {
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
		r, size := m.MemoryFile(img.Memory, slide)
		// A dSYM may sit beside the image's file (an app's own binary
		// built with debug information); its UUID must match.
		var lines LineSource
		if m.HasUUID {
			lines = dsymLines(o, img.File(), m.UUIDString())
		}
		t, isGo, err := machOTable(object, m, r, size, lines)
		if err != nil {
			return nil, fmt.Errorf("symcache: %s (from memory at %#x): %w", img.Path, addr, err)
		}
		// An app's own binary has its file: lines come from there.
		if t.lines == nil && m.HasUUID && fileExists(img.File()) {
			t.lines = machOFileLines(img.File(), m.UUIDString(), isGo, machOHasDWARF(m), o.DWARFOnly)
		}
		return t, nil
	}
	f, err := images.OpenMachOUUID(img.File(), img.BuildID)
	if err != nil {
		return nil, fmt.Errorf("symcache: %w", err)
	}
	defer f.Close()
	lines := dsymLines(o, img.File(), f.UUIDString())
	t, isGo, err := machOTable(object, f.MachO, f.R, f.Size, lines)
	if err != nil {
		return nil, fmt.Errorf("symcache: %s: %w", img.File(), err)
	}
	if t.lines == nil {
		t.lines = machOFileLines(img.File(), f.UUIDString(), isGo, machOHasDWARF(f.MachO), o.DWARFOnly)
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
// (a file slice, or MachO.MemoryFile for an image in memory); size bounds
// the offsets (< 0: unknown). lines, when non-nil, adds file:line.
func MachOTable(object string, m *images.MachO, r io.ReaderAt, size int64, lines LineSource) (*Table, error) {
	t, _, err := machOTable(object, m, r, size, lines)
	return t, err
}

// machOTable is MachOTable, also telling whether the image is a Go binary
// (has a __gopclntab).
func machOTable(object string, m *images.MachO, r io.ReaderAt, size int64, lines LineSource) (*Table, bool, error) {
	text := m.Text()
	if text == nil {
		return nil, false, fmt.Errorf("%s: no __TEXT segment", object)
	}
	starts, serr := m.ReadFunctionStarts(r, size, nil)
	var syms []Symbol
	if m.Symtab != nil && m.Symtab.NSyms > 0 {
		st, err := m.ReadSymbolTable(r, size)
		if err != nil {
			return nil, false, err
		}
		syms = machOSymbols(m, st, make([]Symbol, 0, st.Len()+len(starts)+2*len(m.Sections)))
	}
	// A Go binary linked with -s: name its functions from __gopclntab.
	gs, gl, isGo, err := machOGopclntab(m, r, size, syms)
	if err == nil && gl != nil {
		syms = gs
		if lines == nil {
			lines = gl
		}
	}
	if serr != nil && len(syms) == 0 {
		return nil, false, serr
	}
	for _, a := range starts {
		syms = append(syms, Symbol{Start: a})
	}
	// Bound each section of instructions by anonymous starts, so that an
	// address in __stubs, say, is not taken for the last function of
	// __text.
	for i := range m.Sections {
		s := &m.Sections[i]
		if s.Instructions() && s.Size > 0 {
			syms = append(syms, Symbol{Start: s.Addr}, Symbol{Start: s.Addr + s.Size})
		}
	}
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
	return NewTable(object, syms, segs, lines), isGo, nil
}

// machOSymbols appends the function symbols of st to dst.
func machOSymbols(m *images.MachO, st *images.MachOSymbolTable, dst []Symbol) []Symbol {
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
	for i := 0; i < n; i++ {
		e := st.Entry(i)
		if e.Type&images.NStab != 0 || e.Type&images.NType != images.NSect {
			continue
		}
		if e.Sect == 0 || int(e.Sect) > len(sects) {
			continue
		}
		s := &sects[e.Sect-1]
		if !s.code || e.Value < s.lo || e.Value >= s.hi {
			continue
		}
		if e.Desc&images.ReferencedDynamically != 0 {
			continue
		}
		name, ok := st.Name(e.Strx)
		if !ok || name == "" {
			continue
		}
		if name[0] == '_' {
			name = name[1:]
		}
		dst = append(dst, Symbol{Name: TrimGoABI(name), Start: e.Value})
	}
	return dst
}
