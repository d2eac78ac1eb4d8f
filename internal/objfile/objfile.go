// Package objfile bounds what reading an object file a target controls may
// cost: every size in its headers is checked against the bytes the file
// really holds (its length less its holes) and against a fixed cap for its
// kind, before anything of that size is allocated. A 20 KB sparse file can
// claim gigabytes of symbols that read as zeros; these checks refuse it.
package objfile

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/macprof/macprof/internal/safefile"
)

// Caps on one section (or Mach-O table) by kind. Each is well above what
// real objects need (the largest here, node 20, has a 2.6 MiB .symtab, a
// 7.5 MiB .strtab and a 2.8 MiB .eh_frame; libLLVM-15 a 5 MiB .eh_frame)
// and bounds what one hostile file can make the profiler hold.
const (
	// MaxSymbolTable bounds .symtab, .dynsym and LC_SYMTAB's entries:
	// 64 MiB is 2.8 million ELF symbols, 4 million Mach-O ones.
	MaxSymbolTable = 64 << 20
	// MaxStringTable bounds the string table of a symbol table.
	MaxStringTable = 128 << 20
	// MaxFrameSection bounds .eh_frame, .eh_frame_hdr and .debug_frame.
	MaxFrameSection = 64 << 20
	// MaxSection bounds any other section (DWARF, the Go pclntab), a
	// compressed section's expanded size included: DWARF is read whole
	// per section by debug/dwarf.
	MaxSection = 1 << 30
)

// maxExtents bounds how many data extents DataSize follows: a file made of
// more alternations of data and holes than this is no linker's output,
// and what lies past them counts as holes.
const maxExtents = 4096

// DataSize returns f's size and how many of its bytes hold data: its size
// less its holes, where the file system reports them (SEEK_DATA and
// SEEK_HOLE), else its size.
func DataSize(f *os.File) (size, data int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size = st.Size()
	if seekData == 0 {
		return size, size, nil
	}
	var off int64
	for i := 0; i < maxExtents && off < size; i++ {
		d, err := f.Seek(off, seekData)
		if err != nil {
			if i == 0 && !isNoData(err) {
				return size, size, nil // no hole support: all data
			}
			break // no data past off
		}
		h, err := f.Seek(d, seekHole)
		if err != nil || h <= d {
			return size, size, nil
		}
		data += min(h, size) - d
		off = h
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, 0, err
	}
	return size, data, nil
}

// ErrBadSize is the error of a size in a file's headers that the file
// cannot hold or that is over its cap.
var ErrBadSize = errors.New("size beyond what the file holds")

// NewELF reads the ELF headers of file and checks its sections (CheckELF);
// every read through the returned File counts against budget bytes.
func NewELF(file *os.File, budget int64) (*elf.File, error) {
	size, data, err := DataSize(file)
	if err != nil {
		return nil, err
	}
	f, err := elf.NewFile(safefile.Budget(file, budget))
	if err != nil {
		return nil, err
	}
	if err := CheckELF(f, size, data); err != nil {
		return nil, err
	}
	return f, nil
}

// MapELF is NewELF also returning a read-only mapping of file (Map), so
// that the caller reads large sections in place (SectionBytes) and closes
// it after the file; nil where the file cannot be mapped. The headers and
// the File's own reads (small sections) go through pread, which costs
// less than the page faults of their scattered pages; budget bounds
// those reads, and again what is taken from the mapping.
func MapELF(file *os.File, budget int64) (*elf.File, *Mapping, error) {
	size, data, err := DataSize(file)
	if err != nil {
		return nil, nil, err
	}
	f, err := elf.NewFile(safefile.Budget(file, budget))
	if err != nil {
		return nil, nil, err
	}
	if err := CheckELF(f, size, data); err != nil {
		return nil, nil, err
	}
	m, err := Map(file, size, budget)
	if err != nil {
		m = nil
	}
	return f, m, nil
}

// SectionBytes returns the bytes of s, an uncompressed section with
// bytes in the file, in place from m (read them only with PanicOnFault
// set), or copied (s.Data) when m is nil or s is compressed.
func SectionBytes(m *Mapping, s *elf.Section) ([]byte, error) {
	if s.Type == elf.SHT_NOBITS {
		return nil, errors.New("section " + s.Name + " has no bytes in the file")
	}
	if m == nil || s.Flags&elf.SHF_COMPRESSED != 0 {
		return s.Data()
	}
	return m.Bytes(s.Offset, s.FileSize)
}

// CheckELF checks that every section with bytes in the file lies inside
// its size bytes and is no larger than the data bytes it holds (a section
// cannot be made of holes), and that no section is over the cap for its
// kind (Cap).
func CheckELF(f *elf.File, size, data int64) error {
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS || s.Type == elf.SHT_NULL {
			continue
		}
		end := s.Offset + s.FileSize
		if end < s.Offset || end > uint64(size) {
			return fmt.Errorf("section %s: %d bytes at %#x run past the end of the %d-byte file: %w", s.Name, s.FileSize, s.Offset, size, ErrBadSize)
		}
		if s.FileSize > uint64(data) {
			return fmt.Errorf("section %s: %d bytes, but the file holds %d bytes of data (the rest are holes): %w", s.Name, s.FileSize, data, ErrBadSize)
		}
		if c := Cap(s); s.Size > c {
			return fmt.Errorf("section %s: %d bytes, over the limit of %d for its kind: %w", s.Name, s.Size, c, ErrBadSize)
		}
	}
	return nil
}

// Cap returns the largest size accepted for section s (its expanded size,
// when compressed).
func Cap(s *elf.Section) uint64 {
	switch {
	case s.Type == elf.SHT_SYMTAB || s.Type == elf.SHT_DYNSYM:
		return MaxSymbolTable
	case s.Type == elf.SHT_STRTAB:
		return MaxStringTable
	case s.Name == ".eh_frame" || s.Name == ".eh_frame_hdr" || strings.HasSuffix(s.Name, "debug_frame"):
		return MaxFrameSection
	}
	return MaxSection
}

// CheckRange checks that n bytes at off lie inside a file of size bytes of
// which data hold data, and that n is at most limit; what names the range
// for the error.
func CheckRange(what string, off, n uint64, size, data int64, limit uint64) error {
	switch end := off + n; {
	case size >= 0 && (end < off || end > uint64(size)):
		return fmt.Errorf("%s: %d bytes at %#x run past the end of the %d-byte file: %w", what, n, off, size, ErrBadSize)
	case data >= 0 && n > uint64(data):
		return fmt.Errorf("%s: %d bytes, but the file holds %d bytes of data (the rest are holes): %w", what, n, data, ErrBadSize)
	case n > limit:
		return fmt.Errorf("%s: %d bytes, over the limit of %d: %w", what, n, limit, ErrBadSize)
	}
	return nil
}
