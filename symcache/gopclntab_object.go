package symcache

import (
	"debug/elf"
	"fmt"
	"io"

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

// elfGopclntab merges the functions of a Go ELF binary's pclntab into
// syms when syms names fewer than half of them, and returns the pclntab as
// the LineSource then (nil otherwise).
func elfGopclntab(object string, f *elf.File, syms []Symbol) ([]Symbol, LineSource, error) {
	s := f.Section(".gopclntab")
	if s == nil {
		s = f.Section(".data.rel.ro.gopclntab") // PIE
	}
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size < gopclntabHeaderSize {
		return syms, nil, nil
	}
	var hdr [gopclntabHeaderSize]byte
	if _, err := s.ReadAt(hdr[:], 0); err != nil {
		return syms, nil, fmt.Errorf("symcache: %s: %s: %w", object, s.Name, err)
	}
	if !gopclntabNeeded(hdr[:], len(syms)) {
		return syms, nil, nil
	}
	if s.Size > maxGopclntab {
		return syms, nil, fmt.Errorf("symcache: %s: %s of %d bytes exceeds the limit of %d", object, s.Name, s.Size, maxGopclntab)
	}
	data, err := s.Data() // reads in chunks: a lying size fails early
	if err != nil {
		return syms, nil, fmt.Errorf("symcache: %s: %s: %w", object, s.Name, err)
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
		return syms, nil, fmt.Errorf("symcache: %s: %s: %w", object, s.Name, err)
	}
	return t.Symbols(syms), t, nil
}

// machOGopclntab is elfGopclntab for Mach-O: the section __gopclntab (in
// __TEXT, or __DATA_CONST from Go 1.22 on some targets), read through r.
func machOGopclntab(m *images.MachO, r io.ReaderAt, size int64, syms []Symbol) ([]Symbol, LineSource, error) {
	var s, text *images.MachOSection
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
		return syms, nil, nil
	}
	named := 0
	for i := range syms {
		if syms[i].Name != "" {
			named++
		}
	}
	var hdr [gopclntabHeaderSize]byte
	if _, err := r.ReadAt(hdr[:], int64(s.Offset)); err != nil {
		return syms, nil, fmt.Errorf("__gopclntab: %w", err)
	}
	if !gopclntabNeeded(hdr[:], named) {
		return syms, nil, nil
	}
	if s.Size > maxGopclntab || (size >= 0 && uint64(s.Offset)+s.Size > uint64(size)) {
		return syms, nil, fmt.Errorf("__gopclntab: %d bytes at %#x exceed the file or the limit of %d", s.Size, s.Offset, maxGopclntab)
	}
	data, err := readChunked(r, int64(s.Offset), int64(s.Size))
	if err != nil {
		return syms, nil, fmt.Errorf("__gopclntab: %w", err)
	}
	addr := uint64(0)
	if GopclntabTextStart(data) == 0 && text != nil {
		addr = text.Addr
	}
	t, err := ParseGopclntab(data, addr)
	if err != nil {
		return syms, nil, fmt.Errorf("__gopclntab: %w", err)
	}
	return t.Symbols(syms), t, nil
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
