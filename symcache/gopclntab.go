package symcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"
)

// A Go binary's pclntab (.gopclntab, __gopclntab) holds every function's
// entry, name and per-PC file:line, and survives -ldflags=-s, so it names
// the functions of stripped Go programs. The parser reads the Go 1.2, 1.16,
// 1.18 and 1.20+ layouts and checks every offset against the table,
// because the file is controlled by the possibly hostile target.

// maxGopclntab bounds the pclntab read from a file (the largest real
// programs have pclntabs of a few hundred MiB at most).
const maxGopclntab = 1 << 30

// maxGoFuncs bounds the number of functions taken from one pclntab.
const maxGoFuncs = 1 << 23

// maxGoName bounds one function or file name.
const maxGoName = 1 << 16

// Pclntab header magics (internal/abi.PCLnTabMagic).
const (
	go12Magic  = 0xfffffffb
	go116Magic = 0xfffffffa
	go118Magic = 0xfffffff0
	go120Magic = 0xfffffff1
)

const (
	go12 = iota + 1
	go116
	go118 // 1.18 and 1.20+: 32-bit entry offsets from the text start
)

// Gopclntab is a parsed Go pclntab. It is immutable, so it is safe for
// concurrent use, and it implements LineSource.
type Gopclntab struct {
	order     binary.ByteOrder
	big       bool // order is big-endian (u32 reads without an interface call)
	version   int
	go120     bool // _func has startLine (Go 1.20+)
	quantum   uint32
	ptrSize   uint32
	nfunc     uint32
	textStart uint64
	// names, files: the function-name and file-name tables as strings
	// over the table's bytes (see bytesString).
	names   string
	files   string
	cutab   []byte
	pctab   []byte
	funcs   []byte // base of funcoff
	functab []byte // (nfunc*2+1) fields
	// filetab12 is the Go 1.2 file table (uint32 offsets into names).
	filetab12 []byte
	// gofunc is go:func.*, which funcdata (the inline tree) are offsets
	// into; nil when unknown (see SetGoFunc).
	gofunc []byte
}

// GopclntabTextStart returns the text start (runtime.text) recorded in the
// header of a Go 1.18+ pclntab, or 0 when the table has none (older
// layouts) or it was left for a dynamic relocation to fill (PIE).
func GopclntabTextStart(data []byte) uint64 {
	order, version, ptr, ok := gopclntabHeader(data)
	if !ok || version != go118 {
		return 0
	}
	return uintptrAt(order, ptr, data, 8+2*uint64(ptr))
}

// gopclntabHeader decodes the pclntab header: byte order, layout version
// and pointer size, or ok false for an unknown magic.
func gopclntabHeader(data []byte) (order binary.ByteOrder, version int, ptrSize uint32, ok bool) {
	if len(data) < 16 || data[4] != 0 || data[5] != 0 {
		return nil, 0, 0, false
	}
	if q := data[6]; q != 1 && q != 2 && q != 4 {
		return nil, 0, 0, false
	}
	if p := data[7]; p != 4 && p != 8 {
		return nil, 0, 0, false
	}
	for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		switch o.Uint32(data) {
		case go12Magic:
			return o, go12, uint32(data[7]), true
		case go116Magic:
			return o, go116, uint32(data[7]), true
		case go118Magic, go120Magic:
			return o, go118, uint32(data[7]), true
		}
	}
	return nil, 0, 0, false
}

// uintptrAt reads a ptr-sized word at off, or returns 0 when it is out of
// range.
func uintptrAt(o binary.ByteOrder, ptr uint32, b []byte, off uint64) uint64 {
	if off > uint64(len(b)) || uint64(len(b))-off < uint64(ptr) {
		return 0
	}
	if ptr == 4 {
		return uint64(o.Uint32(b[off:]))
	}
	return o.Uint64(b[off:])
}

// ParseGopclntab parses a pclntab. text is the address of runtime.text,
// which Go 1.18+ tables count function entries from; 0 takes the one the
// table's header records (see GopclntabTextStart), which is 0 in a PIE
// whose dynamic relocations have not been applied: pass the start of the
// text section then. Older tables hold absolute addresses and ignore text.
// The Gopclntab refers to data, which must not be modified afterwards.
func ParseGopclntab(data []byte, text uint64) (*Gopclntab, error) {
	order, version, ptr, ok := gopclntabHeader(data)
	if !ok {
		return nil, errors.New("gopclntab: bad header")
	}
	t := &Gopclntab{order: order, big: order == binary.ByteOrder(binary.BigEndian), version: version, quantum: uint32(data[6]), ptrSize: ptr}
	t.go120 = order.Uint32(data) == go120Magic
	word := func(i uint64) uint64 { return uintptrAt(order, ptr, data, 8+i*uint64(ptr)) }
	sub := func(i uint64) ([]byte, error) {
		off := word(i)
		if off == 0 || off > uint64(len(data)) {
			return nil, fmt.Errorf("gopclntab: header word %d: offset %#x outside the %d-byte table", i, off, len(data))
		}
		return data[off:], nil
	}
	nfunc := word(0)
	var err error
	var names, files []byte
	fieldSize := uint64(ptr)
	switch version {
	case go118:
		fieldSize = 4
		if text == 0 {
			text = word(2)
		}
		if text == 0 {
			return nil, errors.New("gopclntab: no text start")
		}
		t.textStart = text
		if names, err = sub(3); err != nil {
			return nil, err
		}
		if t.cutab, err = sub(4); err != nil {
			return nil, err
		}
		if files, err = sub(5); err != nil {
			return nil, err
		}
		if t.pctab, err = sub(6); err != nil {
			return nil, err
		}
		if t.funcs, err = sub(7); err != nil {
			return nil, err
		}
	case go116:
		if names, err = sub(2); err != nil {
			return nil, err
		}
		if t.cutab, err = sub(3); err != nil {
			return nil, err
		}
		if files, err = sub(4); err != nil {
			return nil, err
		}
		if t.pctab, err = sub(5); err != nil {
			return nil, err
		}
		if t.funcs, err = sub(6); err != nil {
			return nil, err
		}
	case go12:
		names, t.pctab, t.funcs = data, data, data
	}
	// The function table starts the funcoff base, except in Go 1.2,
	// where it follows the header and funcoffs count from the table's
	// start.
	ftab := t.funcs
	if version == go12 {
		ftab = data[8+ptr:]
	}
	if nfunc == 0 || nfunc > maxGoFuncs {
		return nil, fmt.Errorf("gopclntab: %d functions", nfunc)
	}
	size := (2*nfunc + 1) * fieldSize
	if size > uint64(len(ftab)) {
		return nil, fmt.Errorf("gopclntab: function table of %d entries exceeds the table", nfunc)
	}
	t.nfunc = uint32(nfunc)
	t.functab = ftab[:size]
	if version == go12 {
		// The file table's offset follows the function table; its
		// first word counts its entries, including that word.
		if uint64(len(ftab)) >= size+4 {
			off := uint64(order.Uint32(ftab[size:]))
			if off+4 <= uint64(len(data)) {
				n := uint64(order.Uint32(data[off:]))
				if n*4 <= uint64(len(data))-off {
					t.filetab12 = data[off : off+n*4]
				}
			}
		}
	}
	// Strings over data, which the caller does not modify, so that
	// every name is a substring: neither a copy nor an allocation.
	t.names = bytesString(names)
	if version != go12 {
		t.files = bytesString(files)
	}
	return t, nil
}

// bytesString returns b as a string without copying it: b must not be
// modified afterwards (ParseGopclntab's data must not be).
func bytesString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Len returns the number of functions in the table.
func (t *Gopclntab) Len() int { return int(t.nfunc) }

// u32 reads a 32-bit word in the table's byte order.
func (t *Gopclntab) u32(b []byte) uint32 {
	if t.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

// field returns functab field i (i <= 2*nfunc).
func (t *Gopclntab) field(i uint32) uint64 {
	if t.version == go118 {
		return uint64(t.u32(t.functab[4*uint64(i):]))
	}
	return uintptrAt(t.order, t.ptrSize, t.functab, uint64(i)*uint64(t.ptrSize))
}

// pc returns the entry of function i, or for i == nfunc the end of the last.
func (t *Gopclntab) pc(i uint32) uint64 {
	v := t.field(2 * i)
	if t.version == go118 {
		v += t.textStart
	}
	return v
}

// funcField returns field n (1: nameOff, 5: pcfile, 6: pcln, 8: cuOffset)
// of function i's _func, and whether it is in range.
func (t *Gopclntab) funcField(i uint32, n uint64) (uint32, bool) {
	off := t.field(2*i + 1)
	sz0 := uint64(t.ptrSize)
	if t.version == go118 {
		sz0 = 4
	}
	off += sz0 + (n-1)*4
	if off >= uint64(len(t.funcs)) || uint64(len(t.funcs))-off < 4 {
		return 0, false
	}
	return t.u32(t.funcs[off:]), true
}

// cstring returns the NUL-terminated string at off in s, or "".
func cstring(s string, off uint64) string {
	if off >= uint64(len(s)) {
		return ""
	}
	s = s[off:min(uint64(len(s)), off+maxGoName)]
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return ""
}

// Symbols appends a Symbol for every function to dst: its name, entry
// and size (up to the next function's entry). Functions without a
// readable name are left out. Names share the table's memory: appending
// allocates nothing beyond dst.
func (t *Gopclntab) Symbols(dst []Symbol) []Symbol {
	dst = slices.Grow(dst, int(t.nfunc))
	for i := uint32(0); i < t.nfunc; i++ {
		nameOff, ok := t.funcField(i, 1)
		if !ok {
			continue
		}
		name := cstring(t.names, uint64(nameOff))
		if name == "" {
			continue
		}
		start, end := t.pc(i), t.pc(i+1)
		size := uint64(0)
		if end > start {
			size = end - start
		}
		dst = append(dst, Symbol{Name: name, Start: start, Size: size})
	}
	return dst
}

// find returns the index of the function containing pc.
func (t *Gopclntab) find(pc uint64) (uint32, bool) {
	if t.nfunc == 0 || pc < t.pc(0) || pc >= t.pc(t.nfunc) {
		return 0, false
	}
	lo, hi := uint32(0), t.nfunc
	for lo < hi {
		m := lo + (hi-lo)/2
		if t.pc(m) <= pc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, false
	}
	return lo - 1, true
}

// pcvalue evaluates the pc-value table at off in pctab for pc, in a
// function starting at entry. It reads each byte at most once, so its
// cost is bounded by the table's size.
func (t *Gopclntab) pcvalue(off uint32, entry, pc uint64) (int64, bool) {
	if uint64(off) >= uint64(len(t.pctab)) {
		return 0, false
	}
	p := t.pctab[off:]
	val := int64(-1)
	cur := entry
	first := true
	for len(p) > 0 {
		uv, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		if uv == 0 && !first {
			return 0, false
		}
		first = false
		if uv&1 != 0 {
			val += int64(^(uv >> 1))
		} else {
			val += int64(uv >> 1)
		}
		d, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		cur += d * uint64(t.quantum)
		if pc < cur {
			return val, true
		}
	}
	return 0, false
}

// Lines implements LineSource: the frames at addr, innermost first. With
// the inline tree (see SetGoFunc), code inlined into a function gives one
// frame per inlined call, as `go tool addr2line` and runtime.CallersFrames
// name them; without it, inlined code gets no frame (the pc-file and
// pc-line tables there name the inlined body, and the table alone does not
// tell which call it was inlined by).
func (t *Gopclntab) Lines(addr uint64) []Frame {
	i, ok := t.find(addr)
	if !ok {
		return nil
	}
	fr, _ := t.inlineLines(i, t.pc(i), t.pc(i+1), addr)
	return fr
}

// pcdataInlTreeIndex is the pcdata table that tells inlined code.
const pcdataInlTreeIndex = 2
