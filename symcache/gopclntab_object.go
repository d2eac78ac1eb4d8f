package symcache

import (
	"cmp"
	"debug/elf"
	"fmt"
	"io"
	"strings"

	"github.com/macprof/macprof/images"
)

// gopclntabNeeded reports whether an object whose symbol tables name
// named functions should take its functions from a pclntab whose header
// is hdr: when they name fewer than half of the pclntab's functions (no
// .symtab, as after -ldflags=-s).
func gopclntabNeeded(hdr []byte, named int) bool {
	order, _, ptr, ok := gopclntabHeader(hdr)
	if !ok {
		return false
	}
	nfunc := uintptrAt(order, ptr, hdr, 8)
	return nfunc > 0 && uint64(named) < nfunc/2
}

// gopclntabHeaderSize is enough of a pclntab to read its header.
const gopclntabHeaderSize = 8 + 8*8

// elfPclntabSection returns the pclntab section of a Go ELF binary, or nil.
func elfPclntabSection(f *elf.File) *elf.Section {
	s := f.Section(".gopclntab")
	if s == nil {
		s = f.Section(".data.rel.ro.gopclntab") // PIE
	}
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size < gopclntabHeaderSize {
		return nil
	}
	return s
}

// elfGopclntab merges the functions of a Go ELF binary's pclntab into
// syms when syms names fewer than half of them, and returns the pclntab as
// the LineSource then (nil otherwise). isGo tells that the binary has a
// pclntab, needed or not. goFunc is go:func.*'s address from .symtab (0
// if none).
func elfGopclntab(object string, f *elf.File, syms []Symbol, goFunc uint64) (_ []Symbol, _ LineSource, isGo bool, _ error) {
	s := elfPclntabSection(f)
	if s == nil {
		return syms, nil, false, nil
	}
	var hdr [gopclntabHeaderSize]byte
	if _, err := s.ReadAt(hdr[:], 0); err != nil {
		return syms, nil, false, fmt.Errorf("symcache: %s: %s: %w", object, s.Name, err)
	}
	if _, _, _, ok := gopclntabHeader(hdr[:]); !ok {
		return syms, nil, false, nil
	}
	if !gopclntabNeeded(hdr[:], len(syms)) {
		return syms, nil, true, nil
	}
	t, err := elfGoLines(object, f, goFunc)
	if err != nil {
		return syms, nil, true, err
	}
	return t.Symbols(syms), t, true, nil
}

// elfGoLines reads and parses the pclntab of a Go ELF binary, with its
// inline tree when go:func.* is found (goFunc from .symtab, else
// runtime.moduledata).
func elfGoLines(object string, f *elf.File, goFunc uint64) (*Gopclntab, error) {
	s := elfPclntabSection(f)
	if s == nil {
		return nil, fmt.Errorf("symcache: %s: no pclntab", object)
	}
	if s.Size > maxGopclntab {
		return nil, fmt.Errorf("symcache: %s: %s of %d bytes exceeds the limit of %d", object, s.Name, s.Size, maxGopclntab)
	}
	data, err := s.Data() // reads in chunks: a lying size fails early
	if err != nil {
		return nil, fmt.Errorf("symcache: %s: %s: %w", object, s.Name, err)
	}
	text := uint64(0)
	if GopclntabTextStart(data) == 0 {
		// A PIE leaves the header's text start to a dynamic
		// relocation; runtime.text is the start of .text when Go
		// links internally.
		if t := f.Section(".text"); t != nil {
			text = t.Addr
		}
	}
	t, err := ParseGopclntab(data, text)
	if err != nil {
		return nil, fmt.Errorf("symcache: %s: %s: %w", object, s.Name, err)
	}
	attachGoFunc(t, goFuncSource{
		pclntab: data, pclntabAddr: s.Addr, symbol: goFunc,
		section: func(name string) ([]byte, error) {
			d := f.Section(name)
			if d == nil || d.Type == elf.SHT_NOBITS || d.Size > maxModuleSection {
				return nil, fmt.Errorf("no %s", name)
			}
			return d.Data()
		},
		sectionAt: func(addr uint64) ([]byte, error) {
			for _, sec := range f.Sections {
				if sec.Type != elf.SHT_NOBITS && sec.Flags&elf.SHF_ALLOC != 0 && addr >= sec.Addr && addr-sec.Addr < sec.Size {
					n := min(sec.Size-(addr-sec.Addr), maxGopclntab)
					return readChunked(sec, int64(addr-sec.Addr), int64(n))
				}
			}
			return nil, fmt.Errorf("no section holds %#x", addr)
		},
	})
	return t, nil
}

// machOPclntab returns the __gopclntab and __TEXT,__text sections.
func machOPclntab(m *images.MachO) (s, text *images.MachOSection) {
	for i := range m.Sections {
		switch sec := &m.Sections[i]; sec.Name {
		case "__gopclntab":
			s = sec
		case "__text":
			if sec.Segment == "__TEXT" {
				text = sec
			}
		}
	}
	if s == nil || s.Size < gopclntabHeaderSize || s.Offset == 0 {
		return nil, text
	}
	return s, text
}

// machOGopclntab is elfGopclntab for Mach-O: the section __gopclntab (in
// __TEXT, or __DATA_CONST from Go 1.22 on some targets), read through r.
func machOGopclntab(m *images.MachO, r io.ReaderAt, size int64, syms []Symbol) (_ []Symbol, _ LineSource, isGo bool, _ error) {
	s, _ := machOPclntab(m)
	if s == nil {
		return syms, nil, false, nil
	}
	named := 0
	for i := range syms {
		if syms[i].Name != "" {
			named++
		}
	}
	var hdr [gopclntabHeaderSize]byte
	if _, err := r.ReadAt(hdr[:], int64(s.Offset)); err != nil {
		return syms, nil, false, fmt.Errorf("__gopclntab: %w", err)
	}
	if _, _, _, ok := gopclntabHeader(hdr[:]); !ok {
		return syms, nil, false, nil
	}
	if !gopclntabNeeded(hdr[:], named) {
		return syms, nil, true, nil
	}
	t, err := machOGoLines(m, r, size)
	if err != nil {
		return syms, nil, true, err
	}
	return t.Symbols(syms), t, true, nil
}

// machOGoLines reads and parses the __gopclntab of a Go Mach-O image
// through r, with its inline tree when go:func.* is found (from
// runtime.moduledata in __DATA: Go's linker writes link-time addresses
// there, which dyld rebases).
func machOGoLines(m *images.MachO, r io.ReaderAt, size int64) (*Gopclntab, error) {
	s, text := machOPclntab(m)
	if s == nil {
		return nil, fmt.Errorf("no __gopclntab")
	}
	read := func(sec *images.MachOSection, skip, limit uint64) ([]byte, error) {
		if sec.Offset == 0 || skip > sec.Size {
			return nil, fmt.Errorf("%s: no file data", sec.Name)
		}
		n := min(sec.Size-skip, limit)
		if image, ok := r.(machOBytes); ok {
			// A mapped file's bytes, read in place.
			b, ok := image.slice(uint64(sec.Offset)+skip, n)
			if !ok {
				return nil, fmt.Errorf("%s: %d bytes at %#x exceed the file", sec.Name, n, uint64(sec.Offset)+skip)
			}
			return b, nil
		}
		if size < 0 {
			return readChunked(r, int64(uint64(sec.Offset)+skip), int64(n))
		}
		if uint64(sec.Offset)+skip+n > uint64(size) {
			return nil, fmt.Errorf("%s: %d bytes at %#x exceed the file", sec.Name, n, uint64(sec.Offset)+skip)
		}
		// The file holds them: read at once, not grown chunk by
		// chunk (each growth zeroed and copied the bytes again).
		buf := make([]byte, n)
		if got, err := r.ReadAt(buf, int64(uint64(sec.Offset)+skip)); uint64(got) < n {
			return nil, fmt.Errorf("reading %d bytes at %#x: %w", n, uint64(sec.Offset)+skip, cmp.Or(err, io.ErrUnexpectedEOF))
		}
		return buf, nil
	}
	if s.Size > maxGopclntab {
		return nil, fmt.Errorf("__gopclntab: %d bytes exceed the limit of %d", s.Size, maxGopclntab)
	}
	data, err := read(s, 0, s.Size)
	if err != nil {
		return nil, fmt.Errorf("__gopclntab: %w", err)
	}
	addr := uint64(0)
	if GopclntabTextStart(data) == 0 && text != nil {
		addr = text.Addr
	}
	t, err := ParseGopclntab(data, addr)
	if err != nil {
		return nil, fmt.Errorf("__gopclntab: %w", err)
	}
	attachGoFunc(t, goFuncSource{
		pclntab: data, pclntabAddr: s.Addr,
		section: func(name string) ([]byte, error) {
			name = "__" + strings.ReplaceAll(name[1:], ".", "_") // .go.module: __go_module
			for i := range m.Sections {
				if sec := &m.Sections[i]; sec.Name == name && sec.Segment == "__DATA" && sec.Size <= maxModuleSection {
					return read(sec, 0, sec.Size)
				}
			}
			return nil, fmt.Errorf("no %s", name)
		},
		sectionAt: func(a uint64) ([]byte, error) {
			for i := range m.Sections {
				if sec := &m.Sections[i]; a >= sec.Addr && a-sec.Addr < sec.Size {
					return read(sec, a-sec.Addr, maxGopclntab)
				}
			}
			return nil, fmt.Errorf("no section holds %#x", a)
		},
	})
	return t, nil
}

// readChunked reads n bytes at off, growing the buffer only as reads
// succeed, so that a size larger than what r holds fails before it
// allocates much.
func readChunked(r io.ReaderAt, off, n int64) ([]byte, error) {
	const chunk = 1 << 20
	buf := make([]byte, 0, min(n, chunk))
	for int64(len(buf)) < n {
		k := min(n-int64(len(buf)), chunk)
		start := len(buf)
		buf = append(buf, make([]byte, k)...)
		got, err := r.ReadAt(buf[start:], off+int64(start))
		if int64(got) < k {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("reading %d bytes at %#x: %w", n, off, err)
		}
	}
	return buf, nil
}
