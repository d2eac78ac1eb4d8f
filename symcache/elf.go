package symcache

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/safefile"
)

// maxInMemoryELF bounds how much of a target's memory is read for an ELF
// object that has no file (the vDSO).
const maxInMemoryELF = 1 << 20

// LoadELF builds the Table of an ELF image from its file (or, for the vDSO,
// from the target's memory): function symbols from .symtab and .dynsym, and
// the PT_LOAD segments that map file offsets to addresses.
func LoadELF(img *images.Image) (*Table, error) {
	var f *elf.File
	var err error
	closeFile := func() error { return nil }
	if img.Path == "[vdso]" {
		if img.Memory == nil {
			return nil, errors.New("symcache: vdso: no memory reader")
		}
		n := img.Limit - img.Start
		if n > maxInMemoryELF {
			return nil, fmt.Errorf("symcache: vdso: mapping of %d bytes is too large", n)
		}
		buf := make([]byte, n)
		if err := img.Memory.ReadMemory(img.Start, buf); err != nil {
			return nil, fmt.Errorf("symcache: vdso: %w", err)
		}
		// The vDSO is mapped from its start, so offsets are mapping offsets.
		if f, err = elf.NewFile(bytes.NewReader(buf)); err == nil {
			err = objfile.CheckELF(f, int64(n), int64(n))
		}
	} else {
		f, closeFile, err = openImageELF(img)
		if err == nil {
			defer closeFile()
			return loadELFFile(img, f)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("symcache: %s: %w", img.Path, err)
	}
	defer closeFile()
	t, _, err := elfTable(filepath.Base(img.Path), f)
	return t, err
}

// LoadELFMapped is LoadELF for a one-shot command such as symbolize: the
// file is mapped read-only (objfile.MapELF) and its symbol and string
// tables read in place, the Table's names left in the mapping instead of
// copied (node's 13 MB of string tables neither copied nor faulted in as
// fresh memory), and so is its uncompressed DWARF when lines are looked
// up. The caller reads the Table's names and lines only with
// objfile.PanicOnFault set, and calls unmap once done with the Table.
func LoadELFMapped(img *images.Image) (t *Table, unmap func() error, err error) {
	unmap = func() error { return nil }
	if img.Path == "[vdso]" {
		t, err = LoadELF(img)
		return t, unmap, err
	}
	defer objfile.RecoverFault(&err, objfile.PanicOnFault())
	file, err := img.Open()
	if err != nil {
		return nil, unmap, fmt.Errorf("symcache: %s: %w", img.Path, err)
	}
	defer file.Close()
	f, m, err := objfile.MapELF(file, maxELFRead)
	if err != nil {
		return nil, unmap, fmt.Errorf("symcache: %s: %w", img.Path, err)
	}
	if t, err = loadELFFileIn(img, f, m); err != nil || m == nil {
		m.Close()
		return t, unmap, err
	}
	return t, m.Close, nil
}

// loadELFFile builds the Table of img from f, its file: its symbols (or a
// separate debug file's, when it has more), and lines read lazily from the
// Go pclntab or DWARF of the file (opened again as f was) or of its debug
// file.
func loadELFFile(img *images.Image, f *elf.File) (*Table, error) {
	return loadELFFileIn(img, f, nil)
}

// loadELFFileIn is loadELFFile with f's symbol tables read in place from
// m, f's mapping, when m is not nil: the names of its symbols lie in m.
func loadELFFileIn(img *images.Image, f *elf.File, m *objfile.Mapping) (*Table, error) {
	object := filepath.Base(img.Path)
	t, info, err := elfTableIn(object, f, m)
	if err != nil {
		return nil, err
	}
	// Stripped system libraries keep their full symbol table (and DWARF)
	// in a separate debug file (Debian's -dbg packages): merge its
	// symbols.
	if dbg := findDebugFile(img, f); dbg != "" {
		if df, dclose, err := openDebugFile(dbg, img, f); err == nil {
			dt, dinfo, derr := elfTable(object, df)
			dclose()
			// Named symbols decide: the stripped file's table also
			// holds an anonymous start per .eh_frame FDE, often more
			// than the debug file's symbols.
			if derr == nil && dinfo.named > info.named {
				dt.segments = t.segments
				t = dt
			}
			if derr == nil && t.lines == nil && !info.isGo && dinfo.dwarf {
				t.lines = elfLines(object, func() (*elf.File, func() error, error) { return openDebugFile(dbg, img, f) }, false, 0, true)
			}
		}
	}
	if t.lines == nil && m != nil && !info.isGo && info.dwarf && dwarfInPlace(f) {
		t.lines = elfMappedDWARF(object, f, m)
	}
	if t.lines == nil {
		t.lines = elfLines(object, func() (*elf.File, func() error, error) { return openImageELF(img) }, info.isGo, info.goFunc, info.dwarf)
	}
	return t, nil
}

// maxELFRead bounds all that is read of one ELF file (its symbols, line
// tables and debug information), so that the sizes in a hostile file's
// headers (over a huge sparse file that reads as zeros) stay bounded.
const maxELFRead = 1 << 30

// openELF opens the ELF file at path: a regular file only (a target can
// put a FIFO or device at a path it mapped), every section's size checked
// against what the file holds, and bounded reads.
func openELF(path string) (*elf.File, func() error, error) {
	file, err := safefile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return newELF(file)
}

// openImageELF opens the ELF file img maps, as images.Image.Open does (the
// mapped file, never another one put at its path), with openELF's checks.
func openImageELF(img *images.Image) (*elf.File, func() error, error) {
	file, err := img.Open()
	if err != nil {
		return nil, nil, err
	}
	return newELF(file)
}

// newELF reads the ELF headers of file, closing it if they are refused.
func newELF(file *os.File) (*elf.File, func() error, error) {
	f, err := objfile.NewELF(file, maxELFRead)
	if err != nil {
		file.Close()
		return nil, nil, err
	}
	return f, file.Close, nil
}

// openDebugFile opens the debug file at path found for img, whose own file
// is f: it must carry the build ID of the mapped file, so that a path in
// the target's tree (its /usr/lib/debug, its directory) leads to no other
// file than that object's debug file.
func openDebugFile(path string, img *images.Image, f *elf.File) (*elf.File, func() error, error) {
	df, dclose, err := openELF(path)
	if err != nil {
		return nil, nil, err
	}
	if want, ok := debugFileOf(df, img, f); !ok {
		dclose()
		return nil, nil, fmt.Errorf("%s: not the debug file of build ID %s", path, want)
	}
	return df, dclose, nil
}

// debugFileOf returns the build ID of img's mapped file f and whether df
// carries it (or f has none).
func debugFileOf(df *elf.File, img *images.Image, f *elf.File) (want string, ok bool) {
	want = img.BuildID
	if want == "" {
		want = images.ELFFileBuildID(f)
	}
	return want, want == "" || images.ELFFileBuildID(df) == want
}

// DebugDirs are searched for separate debug files, by build ID
// (DIR/.build-id/xx/rest.debug) and by .gnu_debuglink name.
var DebugDirs = []string{"/usr/lib/debug"}

func findDebugFile(img *images.Image, f *elf.File) string {
	id := img.BuildID
	if id == "" {
		id = images.ELFFileBuildID(f)
	}
	root := ""
	if strings.HasSuffix(img.File(), img.Path) {
		root = strings.TrimSuffix(img.File(), img.Path) // e.g. /proc/PID/root
	}
	if id == "" {
		// No build ID to check a debug file by: none from the target's
		// tree (its root, its directory), which it controls.
		root = ""
	}
	for _, dir := range DebugDirs {
		if len(id) > 2 {
			for _, r := range []string{root, ""} {
				p := filepath.Join(r+dir, ".build-id", id[:2], id[2:]+".debug")
				if fileExists(p) {
					return p
				}
			}
		}
		if s := f.Section(".gnu_debuglink"); s != nil && s.Size < 4096 {
			if b, err := s.Data(); err == nil {
				if i := bytes.IndexByte(b, 0); i > 0 {
					name := string(b[:i])
					paths := []string{filepath.Join(root+dir, filepath.Dir(img.Path), name)}
					if id != "" {
						paths = append(paths, filepath.Join(filepath.Dir(img.File()), ".debug", name))
					}
					for _, p := range paths {
						if p != img.File() && fileExists(p) {
							return p
						}
					}
				}
			}
		}
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// ELFTable builds a Table from an open ELF file whose sections were checked
// against what the file holds (objfile.CheckELF). Its lines are those of a
// stripped Go binary's pclntab only (LoadELF adds the others, read lazily).
func ELFTable(object string, f *elf.File) (*Table, error) {
	t, _, err := elfTable(object, f)
	return t, err
}

// elfInfo is what elfTable learns of an ELF file's debug information.
type elfInfo struct {
	isGo   bool   // it has a Go pclntab
	goFunc uint64 // go:func.* from .symtab, 0 if absent
	dwarf  bool   // it has DWARF (.debug_info)
	named  int    // function symbols with a name, from .symtab, .dynsym or the pclntab
}

// elfTable is ELFTable, also returning what the file holds for lines.
func elfTable(object string, f *elf.File) (*Table, elfInfo, error) {
	return elfTableIn(object, f, nil)
}

// elfTableIn is elfTable with the symbol tables read in place from m, f's
// mapping, when m is not nil: the names lie in m.
func elfTableIn(object string, f *elf.File, m *objfile.Mapping) (*Table, elfInfo, error) {
	if m != nil && elfPclntabSection(f) == nil {
		return elfTableMapped(object, f, m)
	}
	var info elfInfo
	syms, nsym, goFunc, err := elfFuncSymbolsIn(f, m, elf.SHT_SYMTAB, nil)
	if err != nil {
		return nil, info, fmt.Errorf("symcache: %s: .symtab: %w", object, err)
	}
	info.goFunc = goFunc
	if syms, _, goFunc, err = elfFuncSymbolsIn(f, m, elf.SHT_DYNSYM, syms); err != nil {
		return nil, info, fmt.Errorf("symcache: %s: .dynsym: %w", object, err)
	}
	if goFunc != 0 {
		info.goFunc = goFunc
	}
	// A Go binary linked with -s has no .symtab: name its functions
	// from the pclntab (which also gives file:line). A bad pclntab
	// leaves the symbols above as they are.
	var lines LineSource
	gs, gl, isGo, err := elfGopclntab(object, f, syms, info.goFunc)
	info.isGo = isGo
	if err == nil && gl != nil {
		syms, lines = gs, gl
	}
	info.dwarf = f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil
	info.named = len(syms)
	if lines == nil {
		for _, a := range execSectionStarts(f) {
			syms = append(syms, Symbol{Start: a})
		}
	}
	if nsym == 0 && lines == nil {
		// Stripped (no .symtab): every function's start from
		// .eh_frame, so that one without a .dynsym name is named
		// image+0xSTART rather than after its neighbour. The
		// sorted table of .eh_frame_hdr lists them without a walk
		// of .eh_frame.
		starts, ok := ehFrameHdrStartsIn(f, m)
		if !ok {
			starts, _ = ehFrameStarts(f, nil)
		}
		syms = slices.Grow(syms, len(starts))
		for _, a := range starts {
			syms = append(syms, Symbol{Start: a})
		}
	}
	return NewTable(object, syms, elfSegments(f), lines), info, nil
}

// elfSegments is f's PT_LOAD segments: file offsets to link-time addresses.
func elfSegments(f *elf.File) []Segment {
	var segs []Segment
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			segs = append(segs, Segment{Offset: p.Off, Addr: p.Vaddr, Size: p.Filesz})
		}
	}
	return segs
}
