package symcache

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/macprof/macprof/internal/objfile"
)

// debug/elf's Symbols builds an 80-byte Symbol for every entry and copies
// each name by scanning to its NUL from its own offset, so a table whose
// entries all point into one long unterminated run of a string table costs
// entries x run in time and memory. elfFuncSymbols keeps only function
// symbols, reads the table in chunks, and takes names as slices of one
// copy of the string table, scanning each byte of it at most once.

// symChunk is how many bytes of a symbol table are read at a time.
const symChunk = 64 << 10

// goFuncNames are the names of the Go linker's go:func.* symbol.
var goFuncNames = [...]string{"go:func.*\x00", "go.func.*\x00"}

// elfFuncSymbols appends the function symbols (STT_FUNC, STT_GNU_IFUNC,
// defined, non-zero) of f's symbol table of type typ to dst; f's sections
// are expected checked against what its file holds (objfile.CheckELF). It
// returns how many entries the table has (the null entry aside) and the
// value of the Go linker's go:func.* symbol when the table has it.
func elfFuncSymbols(f *elf.File, typ elf.SectionType, dst []Symbol) (out []Symbol, entries int, goFunc uint64, err error) {
	return elfFuncSymbolsIn(f, nil, typ, dst)
}

// elfFuncSymbolsIn is elfFuncSymbols reading the tables in place from m,
// f's mapping, when m is not nil: the names then lie in m, not copied.
func elfFuncSymbolsIn(f *elf.File, m *objfile.Mapping, typ elf.SectionType, dst []Symbol) (out []Symbol, entries int, goFunc uint64, err error) {
	first := len(dst)
	// Room for every entry (bounded by objfile.MaxSymbolTable): growing
	// the slices entry by entry would copy them again and again.
	n := elfSymbolCount(f, typ)
	pending := make([]symName, 0, n) // kept symbols, by name offset
	dst = slices.Grow(dst, n)
	strs, entries, goFunc, err := scanFuncSymbols(f, m, typ, true, func(name uint32, value, size uint64) {
		pending = append(pending, symName{name, uint32(len(dst) - first)})
		dst = append(dst, Symbol{Start: value, Size: size})
	})
	if err != nil {
		return dst[:first], 0, 0, err
	}
	nameSymbols(strs, pending, dst[first:], false)
	return dst, entries, goFunc, nil
}

// elfSymbolCount returns how many entries f's symbol table of type typ
// has, or 0 when its size is not one scanFuncSymbols reads.
func elfSymbolCount(f *elf.File, typ elf.SectionType) int {
	s := f.SectionByType(typ)
	if s == nil || s.Size > objfile.MaxSymbolTable {
		return 0
	}
	if f.Class == elf.ELFCLASS32 {
		return int(s.Size / elf.Sym32Size)
	}
	return int(s.Size / elf.Sym64Size)
}

// symName is a kept symbol's name offset in its string table and its
// index among the symbols being named.
type symName struct{ name, idx uint32 }

// nameSymbols sets the name of syms[p.idx] for every p in pending, from
// the string table strs (copied when clone, for strs in a mapping);
// pending is sorted in place.
func nameSymbols(strs string, pending []symName, syms []Symbol, clone bool) {
	// Names in order of their offsets: the NUL that ends one ends every
	// later one before it, so the string table is scanned once.
	slices.SortFunc(pending, func(a, b symName) int { return cmp.Compare(a.name, b.name) })
	nul := -1 // offset of the NUL last found
	for _, p := range pending {
		i := int(p.name)
		if i >= len(strs) {
			continue // no name, as debug/elf gives
		}
		if nul < i {
			j := strings.IndexByte(strs[i:], 0)
			if j < 0 {
				nul = len(strs)
			} else {
				nul = i + j
			}
		}
		if nul < len(strs) {
			name := TrimGoABI(strs[i:nul])
			if clone {
				name = strings.Clone(name)
			}
			syms[p.idx].Name = name
		}
	}
}

// scanFuncSymbols reads f's symbol table of type typ once, calling visit
// with the name offset, value and size of each function symbol (as
// elfFuncSymbols keeps them), and returns the string table, how many
// entries the table has (the null entry aside) and go:func.*'s value
// when findGoFunc (looking for it reads the name of every other symbol).
// With m, f's mapping (objfile.MapELF), both tables are read in place and
// the string table returned lies in m: the caller reads it with
// objfile.PanicOnFault set and copies what it keeps before m is closed.
func scanFuncSymbols(f *elf.File, m *objfile.Mapping, typ elf.SectionType, findGoFunc bool, visit func(name uint32, value, size uint64)) (strs string, entries int, goFunc uint64, err error) {
	s := f.SectionByType(typ)
	if s == nil || s.Size == 0 {
		return "", 0, 0, nil
	}
	entSize := uint64(elf.Sym64Size)
	if f.Class == elf.ELFCLASS32 {
		entSize = elf.Sym32Size
	}
	if s.Size%entSize != 0 {
		return "", 0, 0, fmt.Errorf("%d bytes is not a whole number of %d-byte symbols", s.Size, entSize)
	}
	if s.Size > objfile.MaxSymbolTable {
		return "", 0, 0, fmt.Errorf("%d bytes of symbols, over the limit of %d", s.Size, objfile.MaxSymbolTable)
	}
	if int(s.Link) >= len(f.Sections) || f.Sections[s.Link].Type != elf.SHT_STRTAB {
		return "", 0, 0, errors.New("no string table")
	}
	st := f.Sections[s.Link]
	if st.Size > objfile.MaxStringTable {
		return "", 0, 0, fmt.Errorf("%d-byte string table, over the limit of %d", st.Size, objfile.MaxStringTable)
	}
	if m != nil {
		sb, err := objfile.SectionBytes(m, st)
		if err != nil {
			return "", 0, 0, fmt.Errorf("string table: %w", err)
		}
		strs = bytesString(sb)
		b, err := objfile.SectionBytes(m, s)
		if err != nil || uint64(len(b)) != s.Size {
			return "", 0, 0, fmt.Errorf("symbols: %w", cmp.Or(err, io.ErrUnexpectedEOF))
		}
		entries, goFunc = scanSymbolEntries(b, f.ByteOrder, entSize, goFuncStrs(strs, findGoFunc), visit)
		return strs, max(entries-1, 0), goFunc, nil
	}
	// Read straight into the bytes the names slice: one copy.
	sb := make([]byte, st.Size)
	if _, err := io.ReadFull(st.Open(), sb); err != nil {
		return "", 0, 0, fmt.Errorf("string table: %w", err)
	}
	strs = bytesString(sb)

	r := s.Open()
	buf := make([]byte, min(s.Size, symChunk)/entSize*entSize)
	for left := s.Size; left > 0; {
		chunk := buf[:min(left, uint64(len(buf)))]
		if _, err := io.ReadFull(r, chunk); err != nil {
			return "", 0, 0, fmt.Errorf("symbols: %w", err)
		}
		n, g := scanSymbolEntries(chunk, f.ByteOrder, entSize, goFuncStrs(strs, findGoFunc), visit)
		entries += n
		if g != 0 {
			goFunc = g
		}
		left -= uint64(len(chunk))
	}
	return strs, max(entries-1, 0), goFunc, nil
}

// goFuncStrs is what scanSymbolEntries is given as the string table:
// strs when it looks for go:func.*, else none.
func goFuncStrs(strs string, findGoFunc bool) string {
	if findGoFunc {
		return strs
	}
	return ""
}

// scanSymbolEntries calls visit for each function symbol among the
// entSize-byte entries of b (a whole number of them), whose names are in
// strs, as scanFuncSymbols reads them; it returns how many entries b holds
// and go:func.*'s value (0 if b has none, or strs is empty).
func scanSymbolEntries(b []byte, bo binary.ByteOrder, entSize uint64, strs string, visit func(name uint32, value, size uint64)) (entries int, goFunc uint64) {
	// Little-endian 64-bit entries decoded by direct calls, not
	// through the interface: most of a scan's time otherwise.
	le64 := entSize == elf.Sym64Size && bo == binary.ByteOrder(binary.LittleEndian)
	for e := b; uint64(len(e)) >= entSize; e = e[entSize:] {
		entries++
		var name uint32
		var info byte
		var shndx uint16
		var value, size uint64
		if le64 {
			le := binary.LittleEndian
			name, info, shndx = le.Uint32(e), e[4], le.Uint16(e[6:])
			value, size = le.Uint64(e[8:]), le.Uint64(e[16:])
		} else if entSize == elf.Sym64Size {
			name, info, shndx = bo.Uint32(e), e[4], bo.Uint16(e[6:])
			value, size = bo.Uint64(e[8:]), bo.Uint64(e[16:])
		} else {
			name, value, size = bo.Uint32(e), uint64(bo.Uint32(e[4:])), uint64(bo.Uint32(e[8:]))
			info, shndx = e[12], bo.Uint16(e[14:])
		}
		t := elf.ST_TYPE(info)
		if t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC {
			// go:func.* is data (STT_OBJECT): only other
			// symbols' names are compared with it.
			if uint64(name) < uint64(len(strs)) && strs[name] == 'g' {
				for _, g := range goFuncNames {
					if strings.HasPrefix(strs[name:], g) {
						goFunc = value
					}
				}
			}
			continue
		}
		if value == 0 || elf.SectionIndex(shndx) == elf.SHN_UNDEF {
			continue
		}
		visit(name, value, size)
	}
	return entries, goFunc
}

// execSectionStarts returns where f's executable sections start, to be
// kept as anonymous function starts: code that follows a symbol but lies in
// another section (the PLT's stubs after .init's sizeless _init, a stripped
// file's .fini after its last function's FDE) starts a function there, and
// is named image+0xSTART, not after the symbol before it. A section that
// starts with a symbol keeps its name (a named start wins).
func execSectionStarts(f *elf.File) []uint64 {
	var starts []uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Size > 0 && s.Addr != 0 {
			starts = append(starts, s.Addr)
		}
	}
	return starts
}
