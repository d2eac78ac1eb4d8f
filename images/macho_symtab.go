package images

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"
)

// readChunk is how much readBounded reads at a time, so that a hostile size
// costs at most what the reader can actually deliver, plus one chunk.
const readChunk = 1 << 20

// maxLinkeditBlob bounds one symbol table, string table or function-starts
// blob (the largest real images have a few million symbols).
const maxLinkeditBlob = 1 << 30

// InPlaceReader is an io.ReaderAt over bytes already in memory (a file's
// mapping) that lends them: the symbol table, string table and function
// starts read through it are views of its bytes, not copies, and live as
// long as they do.
type InPlaceReader interface {
	io.ReaderAt
	// InPlace returns the n bytes at off, or false past the end.
	InPlace(off, n uint64) ([]byte, bool)
}

// readBounded reads n bytes at off from r, growing its buffer as the reads
// succeed, so an n larger than what r holds fails before it allocates much;
// all at once where r holds the range's last byte. An InPlaceReader lends
// them instead: a copy cost a one-shot symbolization a fresh page of heap
// for each page of the table (swiftlint: 8.5 MB of symbols).
func readBounded(r io.ReaderAt, off, n uint64, what string) ([]byte, error) {
	if n > maxLinkeditBlob {
		return nil, fmt.Errorf("%s: %d bytes exceeds the limit of %d", what, n, maxLinkeditBlob)
	}
	if off+n < off || off+n > 1<<63 {
		return nil, fmt.Errorf("%s: offset %#x + size %#x overflows", what, off, n)
	}
	if ip, ok := r.(InPlaceReader); ok {
		b, ok := ip.InPlace(off, n)
		if !ok {
			return nil, fmt.Errorf("%s: reading %d bytes at %#x: %w", what, n, off, io.ErrUnexpectedEOF)
		}
		return b, nil
	}
	if n > readChunk && inFile(r) {
		// A file that holds the range's last byte holds the range: one
		// buffer and one read, rather than a buffer grown (and copied)
		// a chunk at a time (swiftlint's 4.6 MB of symbols). Not so a
		// task's memory, which may hold the last page and not those
		// before it.
		var last [1]byte
		if got, _ := r.ReadAt(last[:], int64(off+n-1)); got == 1 {
			buf := make([]byte, n)
			if got, err := r.ReadAt(buf, int64(off)); uint64(got) < n {
				return nil, fmt.Errorf("%s: reading %d bytes at %#x: %w", what, n, off, orEOF(err))
			}
			return buf, nil
		}
	}
	buf := make([]byte, 0, min(n, readChunk))
	for uint64(len(buf)) < n {
		k := min(n-uint64(len(buf)), readChunk)
		start := len(buf)
		buf = slices.Grow(buf, int(k))[:start+int(k)]
		got, err := r.ReadAt(buf[start:], int64(off)+int64(start))
		if uint64(got) < k {
			return nil, fmt.Errorf("%s: reading %d bytes at %#x: %w", what, n, off, orEOF(err))
		}
	}
	return buf, nil
}

// inFile reports whether r reads a file (or a section of one), whose bytes
// are all there up to its end.
func inFile(r io.ReaderAt) bool {
	if sr, ok := r.(*io.SectionReader); ok {
		r, _, _ = sr.Outer()
	}
	_, ok := r.(*os.File)
	return ok
}

// MachOSymbolTable is an image's symbol and string tables, as read from
// __LINKEDIT.
type MachOSymbolTable struct {
	syms []byte // nlist_64 entries
	// strs is the string table. In the dyld shared cache it is the pool
	// every image of a subcache shares, so names are handed out as
	// copies (Name) or as views the caller must copy (NameBytes).
	strs []byte
	// ends holds, once EntryName has run, the end of each entry's name.
	ends []uint32
}

// Nlist64 is one symbol table entry (struct nlist_64).
type Nlist64 struct {
	Strx  uint32 // offset of the name in the string table
	Type  uint8  // n_type: NStab, NType and NExt bits
	Sect  uint8  // n_sect: section number (1-based) or 0
	Desc  uint16 // n_desc
	Value uint64 // n_value: the address
}

// Len returns the number of entries.
func (t *MachOSymbolTable) Len() int { return len(t.syms) / nlistSize }

// Entry returns entry i, 0 <= i < Len().
func (t *MachOSymbolTable) Entry(i int) Nlist64 {
	b := t.syms[i*nlistSize : i*nlistSize+nlistSize]
	le := binary.LittleEndian
	return Nlist64{Strx: le.Uint32(b), Type: b[4], Sect: b[5], Desc: le.Uint16(b[6:]), Value: le.Uint64(b[8:])}
}

// EntryFields returns the fields of entry i, 0 <= i < Len(), as Entry
// does, each on its own: a loop that reads many entries then keeps them
// in registers, where a Nlist64 (of five fields) is built in memory, a
// byte at a time, and read back whole, a stalled load each.
func (t *MachOSymbolTable) EntryFields(i int) (strx uint32, typ, sect uint8, desc uint16, value uint64) {
	b := t.syms[i*nlistSize : i*nlistSize+nlistSize]
	le := binary.LittleEndian
	return le.Uint32(b), b[4], b[5], le.Uint16(b[6:]), le.Uint64(b[8:])
}

// Name returns a copy of the NUL-terminated string at strx in the string
// table. ok is false when strx is outside the table.
func (t *MachOSymbolTable) Name(strx uint32) (name string, ok bool) {
	b, ok := t.NameBytes(strx)
	return string(b), ok
}

// NameBytes returns the NUL-terminated string at strx in the string table,
// without the NUL. It shares memory with the table: copy what is kept, so
// that a shared string pool is not kept alive by it. ok is false when strx
// is outside the table.
func (t *MachOSymbolTable) NameBytes(strx uint32) (name []byte, ok bool) {
	if uint64(strx) >= uint64(len(t.strs)) {
		return nil, false
	}
	s := t.strs[strx:]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return s[:len(s):len(s)], true
}

// StringBytes returns the size of the string table.
func (t *MachOSymbolTable) StringBytes() int { return len(t.strs) }

// EntryName returns the name of entry i, 0 <= i < Len(), as NameBytes
// does for its Strx. The first call finds the end of every entry's name in
// one pass over the string table, in order of offset (NameBytes scans from
// each offset to its NUL: entries that all point into one long unterminated
// run would cost entries x run); later calls take constant time. It is not
// safe for concurrent use.
func (t *MachOSymbolTable) EntryName(i int) (name []byte, ok bool) {
	if t.ends == nil {
		t.findEnds()
	}
	strx := binary.LittleEndian.Uint32(t.syms[i*nlistSize:])
	if uint64(strx) >= uint64(len(t.strs)) {
		return nil, false
	}
	s := t.strs[strx:t.ends[i]]
	return s[:len(s):len(s)], true
}

// findEnds sets ends: for each entry, the offset of the first NUL at or
// after its Strx, or the table's end.
func (t *MachOSymbolTable) findEnds() {
	n := t.Len()
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	strx := func(i uint32) uint32 { return binary.LittleEndian.Uint32(t.syms[int(i)*nlistSize:]) }
	slices.SortFunc(order, func(a, b uint32) int { return cmp.Compare(strx(a), strx(b)) })
	t.ends = make([]uint32, n)
	nul := -1
	for _, i := range order {
		x := int(strx(i))
		if x >= len(t.strs) {
			continue
		}
		if nul < x {
			if j := bytes.IndexByte(t.strs[x:], 0); j >= 0 {
				nul = x + j
			} else {
				nul = len(t.strs)
			}
		}
		t.ends[i] = uint32(nul)
	}
}

// ReadSymbolTable reads the LC_SYMTAB tables through r, which reads the
// image's file offsets (a file slice, or LinkeditMemory for an image in
// memory). size bounds the offsets r can serve (size < 0: unknown); nsyms
// and strsize are checked against it before anything is allocated.
func (m *MachO) ReadSymbolTable(r io.ReaderAt, size int64) (*MachOSymbolTable, error) {
	return m.ReadSymbolTableStrings(r, size, nil)
}

// ReadSymbolTableStrings is ReadSymbolTable with the string table given:
// strs, when non-nil, is the strsize bytes at stroff, read by the caller
// once for every image that shares them (the string pool of a dyld shared
// cache subcache). Only the nlist entries are then read through r.
func (m *MachO) ReadSymbolTableStrings(r io.ReaderAt, size int64, strs []byte) (*MachOSymbolTable, error) {
	st := m.Symtab
	if st == nil {
		return nil, errors.New("macho: no LC_SYMTAB")
	}
	symBytes := uint64(st.NSyms) * nlistSize
	if size >= 0 {
		if uint64(st.SymOff)+symBytes > uint64(size) {
			return nil, formatError(uint64(st.SymOff), st.NSyms, "LC_SYMTAB: %d symbols at %#x run past the end of the %d-byte image", st.NSyms, st.SymOff, size)
		}
		if strs == nil && uint64(st.StrOff)+uint64(st.StrSize) > uint64(size) {
			return nil, formatError(uint64(st.StrOff), st.StrSize, "LC_SYMTAB: %d-byte string table at %#x runs past the end of the %d-byte image", st.StrSize, st.StrOff, size)
		}
	}
	if strs != nil && uint64(len(strs)) != uint64(st.StrSize) {
		return nil, fmt.Errorf("macho: LC_SYMTAB: given string table has %d bytes, strsize is %d", len(strs), st.StrSize)
	}
	syms, err := readBounded(r, uint64(st.SymOff), symBytes, "macho: symbol table")
	if err != nil {
		return nil, err
	}
	if strs == nil {
		if strs, err = readBounded(r, uint64(st.StrOff), uint64(st.StrSize), "macho: string table"); err != nil {
			return nil, err
		}
	}
	return &MachOSymbolTable{syms: syms, strs: strs}, nil
}

// ReadLinkeditBlob reads n bytes at file offset off through r (as for
// ReadSymbolTable), growing its buffer only as the reads succeed.
func ReadLinkeditBlob(r io.ReaderAt, off, n uint64, what string) ([]byte, error) {
	return readBounded(r, off, n, what)
}

// ReadFunctionStarts decodes LC_FUNCTION_STARTS through r (as for
// ReadSymbolTable) and appends the link-time start addresses of the
// image's functions to dst. It returns dst unchanged when the image has no
// LC_FUNCTION_STARTS.
func (m *MachO) ReadFunctionStarts(r io.ReaderAt, size int64, dst []uint64) ([]uint64, error) {
	fs := m.FunctionStarts
	if fs == nil || fs.DataSize == 0 {
		return dst, nil
	}
	text := m.Text()
	if text == nil {
		return dst, formatError(0, nil, "LC_FUNCTION_STARTS: no __TEXT segment")
	}
	if size >= 0 && uint64(fs.DataOff)+uint64(fs.DataSize) > uint64(size) {
		return dst, formatError(uint64(fs.DataOff), fs.DataSize, "LC_FUNCTION_STARTS: %d bytes at %#x run past the end of the %d-byte image", fs.DataSize, fs.DataOff, size)
	}
	b, err := readBounded(r, uint64(fs.DataOff), uint64(fs.DataSize), "macho: LC_FUNCTION_STARTS")
	if err != nil {
		return dst, err
	}
	dst, err = DecodeFunctionStarts(b, text.Addr, text.Addr+text.Size, dst)
	if fe, ok := err.(*FormatError); ok {
		fe.Off += uint64(fs.DataOff)
	}
	return dst, err
}

// DecodeFunctionStarts decodes LC_FUNCTION_STARTS data: ULEB128 deltas, the
// first from the __TEXT address base, ending at a zero delta or the end of
// b. Starts at or past limit are an error, a FormatError whose Off is the
// delta's offset in b.
func DecodeFunctionStarts(b []byte, base, limit uint64, dst []uint64) ([]uint64, error) {
	// Room for as many starts as b has last bytes of a ULEB128, at
	// once: grown by append, a large image's starts were copied and
	// their memory cleared twice over. Counted eight bytes at a time.
	n, k := 0, 0
	for ; k+8 <= len(b); k += 8 {
		n += bits.OnesCount64(^binary.LittleEndian.Uint64(b[k:]) & 0x8080808080808080)
	}
	for _, c := range b[k:] {
		n += int(^c >> 7)
	}
	dst = slices.Grow(dst, n)
	addr := base
	for i := 0; i < len(b); {
		// Deltas of one or two bytes (functions of up to 16 KiB),
		// nearly all of them, without the general loop's checks.
		if c := b[i]; c < 0x80 {
			if c == 0 {
				break
			}
			if addr+uint64(c) < addr || addr+uint64(c) >= limit {
				return dst, formatError(uint64(i), uint64(c), "LC_FUNCTION_STARTS: start %#x+%#x is outside __TEXT (limit %#x)", addr, c, limit)
			}
			addr += uint64(c)
			dst = append(dst, addr)
			i++
			continue
		} else if i+1 < len(b) && b[i+1] < 0x80 {
			delta := uint64(c&0x7f) | uint64(b[i+1])<<7
			if delta == 0 {
				break // a zero padded to two bytes
			}
			if addr+delta < addr || addr+delta >= limit {
				return dst, formatError(uint64(i), delta, "LC_FUNCTION_STARTS: start %#x+%#x is outside __TEXT (limit %#x)", addr, delta, limit)
			}
			addr += delta
			dst = append(dst, addr)
			i += 2
			continue
		}
		start := i
		var delta uint64
		var shift uint
		for {
			if i >= len(b) {
				return dst, formatError(uint64(start), nil, "LC_FUNCTION_STARTS: truncated ULEB128 at byte %d", i)
			}
			c := b[i]
			i++
			if shift > 63 || (shift == 63 && c&0x7e != 0) {
				return dst, formatError(uint64(start), c, "LC_FUNCTION_STARTS: ULEB128 overflows 64 bits at byte %d", i-1)
			}
			delta |= uint64(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				break
			}
		}
		if delta == 0 {
			break
		}
		if addr+delta < addr || addr+delta >= limit {
			return dst, formatError(uint64(start), delta, "LC_FUNCTION_STARTS: start %#x+%#x is outside __TEXT (limit %#x)", addr, delta, limit)
		}
		addr += delta
		dst = append(dst, addr)
	}
	return dst, nil
}
