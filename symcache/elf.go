package symcache

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/macprof/macprof/images"
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
		f, err = elf.NewFile(bytes.NewReader(buf))
	} else {
		f, closeFile, err = openELF(img.File())
		if err != nil && img.OpenPath != "" {
			// The target exited: its /proc/PID/root is gone, but the
			// file usually is where it was.
			f, closeFile, err = openELF(img.Path)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("symcache: %s: %w", img.Path, err)
	}
	defer closeFile()
	t, err := ELFTable(filepath.Base(img.Path), f)
	if err != nil {
		return nil, err
	}
	if img.Path == "[vdso]" {
		return t, nil
	}
	// Stripped system libraries keep their full symbol table in a separate
	// debug file (Debian's -dbg packages): merge its symbols.
	if dbg := findDebugFile(img, f); dbg != "" {
		if df, dclose, err := openELF(dbg); err == nil {
			dt, derr := ELFTable(filepath.Base(img.Path), df)
			dclose()
			if derr == nil && dt.Len() > t.Len() {
				dt.segments = t.segments
				return dt, nil
			}
		}
	}
	return t, nil
}

// maxELFRead bounds all that is read of one ELF file (its symbols, line
// tables and debug information), so that the sizes in a hostile file's
// headers (over a huge sparse file that reads as zeros) stay bounded.
const maxELFRead = 1 << 30

// openELF opens the ELF file at path: a regular file only (a target can
// put a FIFO or device at a path it mapped), and bounded reads.
func openELF(path string) (*elf.File, func() error, error) {
	file, err := safefile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := elf.NewFile(safefile.Budget(file, maxELFRead))
	if err != nil {
		file.Close()
		return nil, nil, err
	}
	return f, file.Close, nil
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
					for _, p := range []string{
						filepath.Join(root+dir, filepath.Dir(img.Path), name),
						filepath.Join(filepath.Dir(img.File()), ".debug", name),
					} {
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

// ELFTable builds a Table from an open ELF file.
func ELFTable(object string, f *elf.File) (*Table, error) {
	var syms []Symbol
	add := func(ss []elf.Symbol) {
		for _, s := range ss {
			t := elf.ST_TYPE(s.Info)
			if t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC {
				continue
			}
			if s.Value == 0 || s.Section == elf.SHN_UNDEF {
				continue
			}
			syms = append(syms, Symbol{Name: Demangle(TrimGoABI(s.Name)), Start: s.Value, Size: s.Size})
		}
	}
	st, err := f.Symbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("symcache: %s: .symtab: %w", object, err)
	}
	add(st)
	dt, err := f.DynamicSymbols()
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("symcache: %s: .dynsym: %w", object, err)
	}
	add(dt)
	// A Go binary linked with -s has no .symtab: name its functions
	// from the pclntab (which also gives file:line). A bad pclntab
	// leaves the symbols above as they are.
	var lines LineSource
	if gs, gl, err := elfGopclntab(object, f, syms); err == nil && gl != nil {
		syms, lines = gs, gl
	}
	var segs []Segment
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			segs = append(segs, Segment{Offset: p.Off, Addr: p.Vaddr, Size: p.Filesz})
		}
	}
	return NewTable(object, syms, segs, lines), nil
}
