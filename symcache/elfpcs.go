package symcache

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/safefile"
)

// A snapshot symbolizes a few dozen addresses per object; LoadELF's whole
// table (every symbol of .symtab and .dynsym, and of a debug file, sorted,
// plus .eh_frame's starts) costs far more than the lookups. loadELFAt
// reads the same symbol tables once, keeping only the symbols that can
// name one of the given addresses (as libdwfl's dwfl_module_addrsym
// does), so that its Table answers for those addresses as LoadELF's does.

// loadELFAt builds a Table of img that gives, for each file offset in
// offs, the answer LoadELF's Table gives; other addresses may get another
// function's name. A Go binary (named from its pclntab) and the vDSO get
// LoadELF's whole table.
//
// Both files are read through read-only mappings (objfile.MapELF): the
// symbol and string tables in place, only the names kept copied out.
func loadELFAt(img *images.Image, offs []uint64) (t *Table, err error) {
	if img.Path == "[vdso]" {
		return LoadELF(img)
	}
	// A file that shrinks under its mapping faults: an error, not a
	// crash (defers run before this one, closing the files).
	defer objfile.RecoverFault(&err, objfile.PanicOnFault())
	file, err := img.Open()
	if err != nil {
		return nil, fmt.Errorf("symcache: %s: %w", img.Path, err)
	}
	defer file.Close()
	f, m, err := objfile.MapELF(file, maxELFRead)
	if err != nil {
		return nil, fmt.Errorf("symcache: %s: %w", img.Path, err)
	}
	defer m.Close()
	if elfPclntabSection(f) != nil {
		return loadELFFile(img, f)
	}
	object := filepath.Base(img.Path)
	segs := elfSegments(f)
	addrs := linkAddresses(segs, offs)
	sel, err := elfSymbolsAt(object, f, m, addrs)
	if err != nil {
		return nil, err
	}
	var syms []Symbol
	chosen := false // the debug file's symbols
	var lines LineSource
	// As loadELFFile: a debug file with more symbols names the
	// functions, and its DWARF gives the lines.
	if dbg := findDebugFile(img, f); dbg != "" {
		if dsyms, more, ddwarf, ok := debugSymbolsAt(object, dbg, img, f, addrs, sel.info.named); ok {
			syms, chosen = dsyms, more
			if ddwarf {
				lines = elfLines(object, func() (*elf.File, func() error, error) { return openDebugFile(dbg, img, f) }, false, 0, true)
			}
		}
	}
	if !chosen {
		sel.addEHStarts(f)
		syms = sel.symbols(m != nil)
	}
	if lines == nil {
		lines = elfLines(object, func() (*elf.File, func() error, error) { return openImageELF(img) }, false, 0, sel.info.dwarf)
	}
	return NewTable(object, syms, segs, lines), nil
}

// debugSymbolsAt reads the debug file at path found for img (whose own
// file f holds named function symbols) as loadELFAt reads f: its symbols
// for addrs and whether it has more named ones (only then are they
// returned), whether it has DWARF, and whether it could be read.
func debugSymbolsAt(object, path string, img *images.Image, f *elf.File, addrs []uint64, named int) (syms []Symbol, more, dwarf, ok bool) {
	file, err := safefile.Open(path)
	if err != nil {
		return nil, false, false, false
	}
	defer file.Close()
	df, m, err := objfile.MapELF(file, maxELFRead)
	if err != nil {
		return nil, false, false, false
	}
	defer m.Close()
	if _, ok := debugFileOf(df, img, f); !ok {
		return nil, false, false, false
	}
	dsel, err := elfSymbolsAt(object, df, m, addrs)
	if err != nil {
		return nil, false, false, false
	}
	if more = dsel.info.named > named; more {
		dsel.addEHStarts(df)
		syms = dsel.symbols(m != nil)
	}
	return syms, more, dsel.info.dwarf, true
}

// linkAddresses maps file offsets to link-time addresses through segs,
// sorted and without repeats; an offset in no segment is left out.
func linkAddresses(segs []Segment, offs []uint64) []uint64 {
	t := Table{segments: segs}
	addrs := make([]uint64, 0, len(offs))
	for _, o := range offs {
		if a, ok := t.Address(o); ok {
			addrs = append(addrs, a)
		}
	}
	slices.Sort(addrs)
	return slices.Compact(addrs)
}

// pcSymbols is what one ELF file's symbol tables hold for a few
// addresses: for each gap between two of them, the symbols at the
// greatest start in it (NewTable picks among them), so that a Table of
// these symbols answers for the addresses as elfTable's Table does.
type pcSymbols struct {
	addrs []uint64 // sorted
	// best[j] holds the symbols at the greatest start in
	// (addrs[j-1], addrs[j]].
	best [][]pendingSym
	strs [2]string // the string tables of .symtab and .dynsym
	nsym int       // entries of .symtab
	info elfInfo
}

// pendingSym is a symbol kept by pcSymbols before its name is read.
type pendingSym struct {
	start, size uint64
	name        uint32 // offset in its table's strings
	table       uint8  // 0: .symtab, 1: .dynsym
	anonymous   bool   // an .eh_frame start
}

// elfSymbolsAt reads f's .symtab and .dynsym once, keeping what names
// addrs (sorted).
func elfSymbolsAt(object string, f *elf.File, m *objfile.Mapping, addrs []uint64) (*pcSymbols, error) {
	p := &pcSymbols{addrs: addrs, best: make([][]pendingSym, len(addrs))}
	for k, typ := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		var err error
		var n int
		p.strs[k], n, _, err = scanFuncSymbols(f, m, typ, func(name uint32, value, size uint64) {
			p.info.named++
			p.keep(pendingSym{start: value, size: size, name: name, table: uint8(k)})
		})
		if err != nil {
			return nil, fmt.Errorf("symcache: %s: %s: %w", object, [...]string{".symtab", ".dynsym"}[k], err)
		}
		if typ == elf.SHT_SYMTAB {
			p.nsym = n
		}
	}
	p.info.dwarf = f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil
	return p, nil
}

// keep files s under the first address at or after its start.
func (p *pcSymbols) keep(s pendingSym) {
	j, _ := slices.BinarySearch(p.addrs, s.start) // the first at or after it
	if j == len(p.addrs) {
		return // after every address: names none of them
	}
	b := p.best[j]
	switch {
	case len(b) == 0 || s.start > b[0].start:
		p.best[j] = append(b[:0], s)
	case s.start == b[0].start:
		p.best[j] = append(b, s)
	}
}

// addEHStarts adds the function starts of f's .eh_frame, as elfTable does
// for a stripped file (no .symtab), when an address lies in no sized
// symbol: only there can such a start name it.
func (p *pcSymbols) addEHStarts(f *elf.File) {
	if p.nsym != 0 || p.allSized() {
		return
	}
	starts, _ := ehFrameStarts(f, nil)
	for _, a := range starts {
		p.keep(pendingSym{start: a, anonymous: true})
	}
}

// allSized reports whether each address lies inside a sized symbol among
// the greatest-start symbols at or before it.
func (p *pcSymbols) allSized() bool {
	var cur []pendingSym
	for j, a := range p.addrs {
		if len(p.best[j]) > 0 {
			cur = p.best[j]
		}
		in := false
		for _, s := range cur {
			if s.size != 0 && a-s.start < s.size {
				in = true
			}
		}
		if !in {
			return false
		}
	}
	return true
}

// symbols returns the kept symbols, named (their names copied when clone:
// the string tables lie in a mapping).
func (p *pcSymbols) symbols(clone bool) []Symbol {
	var syms []Symbol
	var pending [2][]symName
	for _, b := range p.best {
		for _, s := range b {
			if !s.anonymous {
				pending[s.table] = append(pending[s.table], symName{s.name, uint32(len(syms))})
			}
			syms = append(syms, Symbol{Start: s.start, Size: s.size})
		}
	}
	for k := range pending {
		nameSymbols(p.strs[k], pending[k], syms, clone)
	}
	return syms
}
