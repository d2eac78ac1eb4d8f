package cfi

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/macprof/macprof/unwind"
)

// Section is one call-frame section's bytes and where they are loaded.
type Section struct {
	Data []byte
	Addr uint64 // the section's virtual address (pc-relative pointers in .eh_frame)
	EH   bool   // .eh_frame (GNU extensions, pointer encodings) rather than .debug_frame
}

// Segment maps loaded virtual addresses to file offsets: an address a in
// [Vaddr, Vaddr+Size) lies at file offset a-Vaddr+Off.
type Segment struct {
	Vaddr, Size, Off uint64
}

// Limits on what one object's tables may hold; beyond them the rest is
// ignored.
const (
	maxStateStack = 32      // DW_CFA_remember_state depth
	maxCIEs       = 1 << 16 // distinct CIEs
)

// errTruncated reports an entry that runs past its end.
var errTruncated = errors.New("cfi: entry truncated")

// reader decodes DWARF values from a byte slice, remembering the first
// error; reads past the end return zero.
type reader struct {
	b   []byte
	pos int
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errTruncated
	}
	r.pos = len(r.b)
}

func (r *reader) left() int { return len(r.b) - r.pos }

func (r *reader) u8() uint8 {
	if r.pos >= len(r.b) {
		r.fail()
		return 0
	}
	v := r.b[r.pos]
	r.pos++
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if n > uint64(r.left()) {
		r.fail()
		return nil
	}
	v := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return v
}

func (r *reader) u16() uint16 {
	b := r.bytes(2)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(b)
}

func (r *reader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *reader) u64() uint64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (r *reader) uleb() uint64 {
	var v uint64
	var shift uint
	for {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) sleb() int64 {
	var v int64
	var shift uint
	for {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

// Pointer encodings of .eh_frame (DW_EH_PE_*).
const (
	peOmit    = 0xff
	peFormat  = 0x0f
	peApply   = 0x70
	peAbs     = 0x00
	peULEB    = 0x01
	peU2      = 0x02
	peU4      = 0x03
	peU8      = 0x04
	peSLEB    = 0x09
	peS2      = 0x0a
	peS4      = 0x0b
	peS8      = 0x0c
	pePCRel   = 0x10
	peDataRel = 0x30
)

// pointer reads a pointer of encoding enc; secAddr is the section's address
// (for pc-relative values). ok is false for encodings it cannot resolve.
func (r *reader) pointer(enc uint8, secAddr uint64, applyRel bool) (v uint64, ok bool) {
	at := secAddr + uint64(r.pos)
	switch enc & peFormat {
	case peAbs, peU8:
		v = r.u64()
	case peULEB:
		v = r.uleb()
	case peU2:
		v = uint64(r.u16())
	case peU4:
		v = uint64(r.u32())
	case peSLEB:
		v = uint64(r.sleb())
	case peS2:
		v = uint64(int64(int16(r.u16())))
	case peS4:
		v = uint64(int64(int32(r.u32())))
	case peS8:
		v = r.u64()
	default:
		r.fail()
		return 0, false
	}
	if !applyRel {
		return v, true
	}
	switch enc & peApply {
	case 0:
	case pePCRel:
		v += at
	default:
		return v, false // text-, data-, function-relative and aligned: not used in executables' FDEs
	}
	return v, enc&0x80 == 0 // indirect pointers are not followed
}

// cie is a parsed common information entry.
type cie struct {
	codeAlign uint64
	dataAlign int64
	raReg     uint64
	fdeEnc    uint8
	augZ      bool // augmentation data follows in FDEs
	signal    bool
	initial   []byte
	addrSize  int // .debug_frame v4
	bad       bool
	// The state after the initial instructions, computed once.
	ran, initOK bool
	init        rowState
}

// parseCIE parses the CIE whose body (after the length and ID) is body.
func parseCIE(body []byte) cie {
	r := &reader{b: body}
	c := cie{addrSize: 8, fdeEnc: peAbs}
	version := r.u8()
	if version != 1 && version != 3 && version != 4 {
		return cie{bad: true}
	}
	var aug []byte
	for {
		ch := r.u8()
		if r.err != nil {
			return cie{bad: true}
		}
		if ch == 0 {
			break
		}
		aug = append(aug, ch)
		if len(aug) > 16 {
			return cie{bad: true}
		}
	}
	if version == 4 {
		c.addrSize = int(r.u8())
		r.u8() // segment selector size
		if c.addrSize != 8 && c.addrSize != 4 {
			return cie{bad: true}
		}
	}
	c.codeAlign = r.uleb()
	c.dataAlign = r.sleb()
	if version == 1 {
		c.raReg = uint64(r.u8())
	} else {
		c.raReg = r.uleb()
	}
	if len(aug) > 0 {
		if aug[0] != 'z' {
			return cie{bad: true} // "eh" and other old augmentations
		}
		c.augZ = true
		n := r.uleb()
		data := r.bytes(n)
		if r.err != nil {
			return cie{bad: true}
		}
		ar := &reader{b: data}
	aug:
		for _, ch := range aug[1:] {
			switch ch {
			case 'R':
				c.fdeEnc = ar.u8()
			case 'L':
				ar.u8()
			case 'P':
				enc := ar.u8()
				ar.pointer(enc, 0, false)
			case 'S':
				c.signal = true
			case 'B', 'G':
			default:
				break aug // unknown: the data's length still lets FDEs be read
			}
		}
		if ar.err != nil {
			return cie{bad: true}
		}
	}
	if r.err != nil || c.codeAlign == 0 {
		return cie{bad: true}
	}
	c.initial = body[r.pos:]
	return c
}

// record is one CIE or FDE of a call-frame section.
type record struct {
	id    uint64 // the CIE ID field: a CIE's marker, an FDE's CIE pointer
	idPos int    // the section offset of the ID field
	body  []byte // what follows the ID field
	at    int    // the section offset of body
	cie   bool
}

// recordAt frames the record at offset pos of a call-frame section: it
// returns the record, the offset of the next, and whether there is a record
// to use (false for an empty or too short one, which next skips); next is
// -1 where the section ends (its terminator, or a length past its end).
func recordAt(data []byte, pos int, eh bool) (rec record, next int, ok bool) {
	if pos < 0 || pos > len(data)-4 {
		return record{}, -1, false
	}
	length := uint64(binary.LittleEndian.Uint32(data[pos:]))
	pos += 4
	idSize := 4
	if length == 0xffffffff {
		if pos+8 > len(data) {
			return record{}, -1, false
		}
		length = binary.LittleEndian.Uint64(data[pos:])
		pos += 8
		idSize = 8
	}
	if length == 0 {
		if eh {
			return record{}, -1, false // the terminator
		}
		return record{}, pos, false
	}
	if length > uint64(len(data)-pos) {
		return record{}, -1, false
	}
	end := pos + int(length)
	if int(length) < idSize {
		return record{}, end, false
	}
	var id uint64
	if idSize == 8 {
		id = binary.LittleEndian.Uint64(data[pos:])
	} else {
		id = uint64(binary.LittleEndian.Uint32(data[pos:]))
	}
	rec = record{id: id, idPos: pos, body: data[pos+idSize : end], at: pos + idSize}
	rec.cie = (eh && id == 0) || (!eh && (id == 0xffffffff || (idSize == 8 && id == math.MaxUint64)))
	return rec, end, true
}

// ciePos returns the section offset of an FDE's CIE.
func (rec record) ciePos(eh bool) (uint64, bool) {
	if !eh {
		return rec.id, true
	}
	if rec.id > uint64(rec.idPos) {
		return 0, false
	}
	return uint64(rec.idPos) - rec.id, true
}

// parseSection walks one call-frame section and appends a span per FDE it
// can use, converted to file offsets through segs.
func parseSection(arch unwind.Arch, sec Section, segs []Segment, spans []span) []span {
	cies := map[uint64]*cie{}
	var m machine
	m.arch, m.eh = arch, sec.EH
	for pos := 0; pos >= 0; {
		rec, next, ok := recordAt(sec.Data, pos, sec.EH)
		pos = next
		if !ok || rec.cie {
			continue // a CIE is parsed when an FDE refers to it
		}
		c := cieOf(cies, rec, sec)
		if c == nil {
			continue
		}
		if s, ok := m.fde(c, rec.body, sec.Addr+uint64(rec.at), sec, segs); ok {
			spans = append(spans, s)
		}
	}
	return spans
}

// cieOf returns the parsed CIE of the FDE rec, parsing it into cies on
// first use; nil if it cannot be used.
func cieOf(cies map[uint64]*cie, rec record, sec Section) *cie {
	pos, ok := rec.ciePos(sec.EH)
	if !ok {
		return nil
	}
	c, ok := cies[pos]
	if !ok {
		if len(cies) >= maxCIEs {
			return nil
		}
		c = cieAt(sec.Data, pos, sec)
		cies[pos] = c
	}
	if c == nil || c.bad {
		return nil
	}
	return c
}

// cieAt parses the CIE at offset pos of the section, or returns nil.
func cieAt(data []byte, pos uint64, sec Section) *cie {
	if pos > uint64(len(data)) {
		return nil
	}
	rec, _, ok := recordAt(data, int(pos), sec.EH)
	if !ok || !rec.cie {
		return nil
	}
	c := parseCIE(rec.body)
	return &c
}

// toOffset converts a virtual address range to file offsets through the
// segment that holds it.
func toOffset(segs []Segment, vaddr, size uint64) (uint64, bool) {
	for _, s := range segs {
		if vaddr >= s.Vaddr && vaddr-s.Vaddr < s.Size && size <= s.Size-(vaddr-s.Vaddr) {
			return vaddr - s.Vaddr + s.Off, true
		}
	}
	return 0, false
}
