package symcache

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/macprof/macprof/images"
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
		f, err = elf.Open(img.File())
	}
	if err != nil {
		return nil, fmt.Errorf("symcache: %s: %w", img.Path, err)
	}
	defer f.Close()
	return ELFTable(filepath.Base(img.Path), f)
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
			syms = append(syms, Symbol{Name: Demangle(s.Name), Start: s.Value, Size: s.Size})
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
	var segs []Segment
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			segs = append(segs, Segment{Offset: p.Off, Addr: p.Vaddr, Size: p.Filesz})
		}
	}
	return NewTable(object, syms, segs, nil), nil
}
