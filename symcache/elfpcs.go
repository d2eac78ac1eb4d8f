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
	// As loadELFFile: a debug file with more named symbols names the
	// functions, and its DWARF gives the lines. f's own tables are not
	// read where the debug file has more named symbols than they have
	// entries (a stripped library's .dynsym against its -dbg file's
	// .symtab): they could not win.
	dbg := findDebugFile(img, f)
	var d *debugSel
	if dbg != "" {
		if d = debugSymbolsAt(object, dbg, img, f, addrs); d != nil {
			defer d.close()
		}
	}
	var sel *pcSymbols
	if n, ok := symbolEntries(f); d == nil || !ok || d.sel.info.named <= n {
		if sel, err = elfSymbolsAt(object, f, m, addrs); err != nil {
			return nil, err
		}
	}
	var syms []Symbol
	var lines LineSource
	if d != nil && d.sel.info.dwarf {
		lines = elfLines(object, func() (*elf.File, func() error, error) { return openDebugFile(dbg, img, f) }, false, 0, true)
	}
	if d != nil && (sel == nil || d.sel.info.named > sel.info.named) {
		d.sel.addEHStarts(d.f)
		d.sel.addSectionStarts(d.f)
		syms = d.sel.symbols(d.m != nil)
	} else {
		sel.addEHStarts(f)
		sel.addSectionStarts(f)
		syms = sel.symbols(m != nil)
	}
	if lines == nil {
		dwarf := hasDWARF(f)
		if sel != nil {
			dwarf = sel.info.dwarf
		}
		lines = elfLines(object, func() (*elf.File, func() error, error) { return openImageELF(img) }, false, 0, dwarf)
	}
	return NewTable(object, syms, segs, lines), nil
}

// debugSel is a debug file's symbols for some addresses, read in place
// from its mapping, open until close.
type debugSel struct {
	sel   *pcSymbols
	f     *elf.File
	m     *objfile.Mapping
	close func()
}

// debugSymbolsAt reads the debug file at path found for img (whose own
// file is f) as loadELFAt reads f, keeping what names addrs; nil when it
// cannot be read or is not img's debug file.
func debugSymbolsAt(object, path string, img *images.Image, f *elf.File, addrs []uint64) *debugSel {
	file, err := safefile.Open(path)
	if err != nil {
		return nil
	}
	df, m, err := objfile.MapELF(file, maxELFRead)
	if err != nil {
		file.Close()
		return nil
	}
	d := &debugSel{f: df, m: m, close: func() { m.Close(); file.Close() }}
	if _, ok := debugFileOf(df, img, f); !ok {
		d.close()
		return nil
	}
	if d.sel, err = elfSymbolsAt(object, df, m, addrs); err != nil {
		d.close()
		return nil
	}
	return d
}

// symbolEntries returns how many entries f's .symtab and .dynsym hold in
// all, at least as many as their named function symbols; ok is false when
// a table's size is over what scanFuncSymbols reads (it then fails).
func symbolEntries(f *elf.File) (n int, ok bool) {
	for _, typ := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		if s := f.SectionByType(typ); s != nil && s.Size > objfile.MaxSymbolTable {
			return 0, false
		}
		n += elfSymbolCount(f, typ)
	}
	return n, true
}

// hasDWARF reports whether f has DWARF (as elfSymbolsAt records it).
func hasDWARF(f *elf.File) bool {
	return f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil
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
		p.strs[k], n, _, err = scanFuncSymbols(f, m, typ, false, func(name uint32, value, size uint64) {
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
	p.info.dwarf = hasDWARF(f)
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

// addSectionStarts adds the starts of f's executable sections, as
// elfTable does (execSectionStarts).
func (p *pcSymbols) addSectionStarts(f *elf.File) {
	for _, a := range execSectionStarts(f) {
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
