package symcache

import (
	"debug/dwarf"
	"encoding/binary"
	"slices"
	"sort"
)

// dwarfInfo is .debug_info and .debug_abbrev (and .debug_line) as bytes,
// beside the *dwarf.Data read from them, so that DWARFLines can go over a unit's
// entries reading only their tag, whether they have children and their
// DW_AT_sibling: debug/dwarf decodes every attribute of every entry it
// reads, strings included, and allocates each (node's libuv units: most
// of the time its DWARF took). Only the entries whose abbreviation has
// low_pc or ranges, those that may have code, are then read through
// debug/dwarf. l.mu guards it.
type dwarfInfo struct {
	info, abbrev []byte
	line         []byte // .debug_line, for running line programs (lineRows)
	order        binary.ByteOrder
	units        []infoUnit // in .debug_info order
	tables       map[abbrevKey]*abbrevTable
	// attrsLeft bounds the attributes of the abbreviation tables read:
	// hostile units can each name another offset into one large table.
	attrsLeft int
	// decls and attrs are where a table is read before it is copied
	// out at its size.
	decls []abbrevDecl
	attrs []abbrevAttr
}

// infoUnit is one unit's header, as debug/dwarf reads it.
type infoUnit struct {
	base      uint64 // where its header starts: unit references count from it
	data, end uint64 // its entries
	abbrevOff uint64
	vers      uint16
	addrSize  uint8
	is64      bool
}

type abbrevKey struct {
	off      uint64
	addrSize uint8
	is64     bool
	v2       bool // DW_FORM_ref_addr is address-sized
}

// abbrevTable is one abbreviation table, for units of one address size,
// offset size and DW_FORM_ref_addr size.
type abbrevTable struct {
	decls []abbrevDecl
	attrs []abbrevAttr // the attributes of every declaration, in order
	// codes maps a code to its index in decls; nil when the codes are
	// 1, 2, 3, ... in order, as producers write them.
	codes map[uint32]int32
}

type abbrevDecl struct {
	tag      dwarf.Tag
	children bool
	mayCode  bool // it has low_pc or ranges, which give an entry code
	// fixed is the size of its attributes when every form has a fixed
	// size (-1 otherwise), sibAt where in them DW_AT_sibling's reference
	// is (-1 when none), of form sibForm.
	fixed, sibAt int32
	sibForm      uint32
	attrs        [2]int32 // its attributes: abbrevTable.attrs[attrs[0]:attrs[1]]
}

type abbrevAttr struct {
	attr dwarf.Attr
	form uint32 // formUnknown for a number past 32 bits
}

// formUnknown stands for a form number no form has.
const formUnknown = 1<<32 - 1

// maxAbbrevAttrs bounds the attributes of all abbreviation tables a
// dwarfInfo reads; past it, units are read through debug/dwarf.
const maxAbbrevAttrs = 1 << 22

// DWARF forms (DWARF 5, section 7.5.6), and the GNU ones debug/dwarf reads.
const (
	formAddr          = 0x01
	formBlock2        = 0x03
	formBlock4        = 0x04
	formData2         = 0x05
	formData4         = 0x06
	formData8         = 0x07
	formString        = 0x08
	formBlock         = 0x09
	formBlock1        = 0x0a
	formData1         = 0x0b
	formFlag          = 0x0c
	formSdata         = 0x0d
	formStrp          = 0x0e
	formUdata         = 0x0f
	formRefAddr       = 0x10
	formRef1          = 0x11
	formRef2          = 0x12
	formRef4          = 0x13
	formRef8          = 0x14
	formRefUdata      = 0x15
	formIndirect      = 0x16
	formSecOffset     = 0x17
	formExprloc       = 0x18
	formFlagPresent   = 0x19
	formStrx          = 0x1a
	formAddrx         = 0x1b
	formRefSup4       = 0x1c
	formStrpSup       = 0x1d
	formData16        = 0x1e
	formLineStrp      = 0x1f
	formRefSig8       = 0x20
	formImplicitConst = 0x21
	formLoclistx      = 0x22
	formRnglistx      = 0x23
	formRefSup8       = 0x24
	formStrx1         = 0x25
	formStrx2         = 0x26
	formStrx3         = 0x27
	formStrx4         = 0x28
	formAddrx1        = 0x29
	formAddrx2        = 0x2a
	formAddrx3        = 0x2b
	formAddrx4        = 0x2c
	formGNUAddrIndex  = 0x1f01
	formGNUStrIndex   = 0x1f02
	formGNURefAlt     = 0x1f20
	formGNUStrpAlt    = 0x1f21
)

// newDWARFInfo reads the unit headers of info as dwarf.New does (which
// has read them already: nil when they do not read the same).
func newDWARFInfo(info, abbrev, line []byte, order binary.ByteOrder) *dwarfInfo {
	x := &dwarfInfo{info: info, abbrev: abbrev, line: line, order: order,
		tables: map[abbrevKey]*abbrevTable{}, attrsLeft: maxAbbrevAttrs}
	b := dbuf{data: info, order: order}
	for b.pos < uint64(len(info)) {
		u := infoUnit{base: b.pos}
		var n uint64
		for n == 0 && b.ok() && b.pos < uint64(len(info)) {
			n, u.is64 = b.unitLength()
		}
		if n == 0 && b.ok() {
			break // zero-length units at the end
		}
		if !b.ok() || n > uint64(len(info))-b.pos {
			return nil
		}
		start := b.pos
		u.end = start + n
		u.vers = b.u16()
		if u.vers < 2 || u.vers > 5 {
			return nil
		}
		var utype uint8
		if u.vers >= 5 {
			utype = b.u8()
			u.addrSize = b.u8()
		}
		u.abbrevOff = b.offset(u.is64)
		if u.vers < 5 {
			u.addrSize = b.u8()
		}
		switch utype {
		case 4, 5: // DW_UT_skeleton, DW_UT_split_compile: unit ID
			b.skip(8)
		case 2, 6: // DW_UT_type, DW_UT_split_type: signature, offset
			b.skip(8)
			b.offset(u.is64)
		}
		if !b.ok() || b.pos > u.end {
			return nil
		}
		u.data = b.pos
		x.units = append(x.units, u)
		b.pos = u.end
	}
	return x
}

// unitOf returns the unit whose entries start at off (a unit's top
// entry), or nil.
func (x *dwarfInfo) unitOf(off dwarf.Offset) *infoUnit {
	i := sort.Search(len(x.units), func(i int) bool { return x.units[i].data >= uint64(off) })
	if i < len(x.units) && x.units[i].data == uint64(off) {
		return &x.units[i]
	}
	return nil
}

// table returns u's abbreviation table, reading it on first need, or nil
// when it is broken or past the budget.
func (x *dwarfInfo) table(u *infoUnit) *abbrevTable {
	key := abbrevKey{off: u.abbrevOff, addrSize: u.addrSize, is64: u.is64, v2: u.vers == 2}
	if t, ok := x.tables[key]; ok {
		return t
	}
	t := x.readTable(key)
	x.tables[key] = t
	return t
}

func (x *dwarfInfo) readTable(key abbrevKey) *abbrevTable {
	if key.off > uint64(len(x.abbrev)) {
		return nil
	}
	b := dbuf{data: x.abbrev, pos: key.off, order: x.order}
	t := &abbrevTable{decls: x.decls[:0], attrs: x.attrs[:0]}
	defer func() { x.decls, x.attrs = t.decls[:0], t.attrs[:0] }()
	for b.ok() {
		code := uint32(b.uleb())
		if code == 0 {
			break
		}
		a := abbrevDecl{tag: dwarf.Tag(b.uleb()), children: b.u8() != 0, sibAt: -1}
		a.attrs[0] = int32(len(t.attrs))
		fixed := int32(0)
		for b.ok() {
			attr, form := b.uleb(), b.uleb()
			if attr == 0 && form == 0 {
				break
			}
			if form == formImplicitConst {
				b.uleb() // its value (an SLEB128: the same bytes)
			}
			if x.attrsLeft--; x.attrsLeft < 0 {
				return nil
			}
			at := abbrevAttr{attr: dwarf.Attr(attr), form: uint32(min(form, formUnknown))}
			t.attrs = append(t.attrs, at)
			switch at.attr {
			case dwarf.AttrLowpc, dwarf.AttrRanges:
				a.mayCode = true
			}
			size := int32(fixedFormSize(uint64(at.form), key))
			if size < 0 || fixed < 0 {
				fixed = -1
				continue
			}
			if at.attr == dwarf.AttrSibling && a.sibAt < 0 {
				a.sibAt, a.sibForm = fixed, at.form
			}
			fixed += size
		}
		a.attrs[1] = int32(len(t.attrs))
		a.fixed = fixed
		if fixed < 0 {
			a.sibAt = -1
		}
		if t.codes == nil && int(code) != len(t.decls)+1 {
			t.codes = make(map[uint32]int32, len(t.decls)+1)
			for i := range t.decls {
				t.codes[uint32(i+1)] = int32(i)
			}
		}
		if t.codes != nil {
			t.codes[code] = int32(len(t.decls)) // a code given twice: the last, as debug/dwarf
		}
		t.decls = append(t.decls, a)
	}
	if !b.ok() {
		return nil
	}
	return &abbrevTable{decls: slices.Clone(t.decls), attrs: slices.Clone(t.attrs), codes: t.codes}
}

func (t *abbrevTable) find(code uint32) *abbrevDecl {
	if t.codes == nil {
		if code-1 < uint32(len(t.decls)) {
			return &t.decls[code-1]
		}
		return nil
	}
	if i, ok := t.codes[code]; ok {
		return &t.decls[i]
	}
	return nil
}

// fixedFormSize is the size of a value of form in units of key, or -1
// when it varies (or is a form this reader does not know).
func fixedFormSize(form uint64, key abbrevKey) int {
	off := 4
	if key.is64 {
		off = 8
	}
	switch form {
	case formFlagPresent, formImplicitConst:
		return 0
	case formData1, formFlag, formRef1, formStrx1, formAddrx1:
		return 1
	case formData2, formRef2, formStrx2, formAddrx2:
		return 2
	case formStrx3, formAddrx3:
		return 3
	case formData4, formRef4, formRefSup4, formStrx4, formAddrx4:
		return 4
	case formData8, formRef8, formRefSig8, formRefSup8:
		return 8
	case formData16:
		return 16
	case formAddr:
		return int(key.addrSize)
	case formRefAddr:
		if key.v2 {
			return int(key.addrSize)
		}
		return off
	case formStrp, formLineStrp, formSecOffset, formStrpSup, formGNURefAlt, formGNUStrpAlt:
		return off
	}
	return -1
}

// walkEntry is what the walk decides on of one entry; e is the entry
// decoded, when it was (the debug/dwarf reader, or an entry that may
// have code).
type walkEntry struct {
	off      dwarf.Offset
	tag      dwarf.Tag
	children bool
	mayCode  bool
	sib      dwarf.Offset // its DW_AT_sibling, 0 when it has none
}

// entryCursor goes over the entries of one unit: through .debug_info's
// bytes where l has them, else through a debug/dwarf Reader.
type entryCursor struct {
	l *DWARFLines
	r *dwarf.Reader // when the bytes are not there
	e *dwarf.Entry  // the entry r read last

	u   *infoUnit
	t   *abbrevTable
	key abbrevKey
	b   dbuf
}

// cursor returns a cursor at the first child of unit cu, or false when
// cu cannot be read.
func (l *DWARFLines) cursor(cu *dwarf.Entry) (*entryCursor, bool) {
	c := &entryCursor{l: l}
	if x := l.info; x != nil {
		if u := x.unitOf(cu.Offset); u != nil && validAddrSize(u.addrSize) {
			if t := x.table(u); t != nil {
				c.u, c.t = u, t
				c.key = abbrevKey{addrSize: u.addrSize, is64: u.is64, v2: u.vers == 2}
				c.b = dbuf{data: x.info[:u.end], pos: u.data, order: x.order}
				var w walkEntry
				return c, c.next(&w) && w.off == cu.Offset
			}
		}
	}
	c.r = l.d.Reader()
	c.r.Seek(cu.Offset)
	e, err := c.r.Next()
	return c, err == nil && e != nil && e.Offset == cu.Offset
}

// next reads the next entry into w; false at the unit's end or a break.
func (c *entryCursor) next(w *walkEntry) bool {
	if c.r != nil {
		e, err := c.r.Next()
		if err != nil || e == nil {
			return false
		}
		c.e = e
		sib, _ := e.Val(dwarf.AttrSibling).(dwarf.Offset)
		*w = walkEntry{off: e.Offset, tag: e.Tag, children: e.Children, mayCode: true, sib: sib}
		return true
	}
	b := &c.b
	if b.pos >= uint64(len(b.data)) {
		return false
	}
	off := b.pos
	code := uint32(b.uleb())
	if !b.ok() {
		return false
	}
	if code == 0 {
		*w = walkEntry{} // debug/dwarf gives a null entry no offset
		return true
	}
	a := c.t.find(code)
	if a == nil {
		return false
	}
	*w = walkEntry{off: dwarf.Offset(off), tag: a.tag, children: a.children, mayCode: a.mayCode}
	if a.fixed >= 0 {
		at := b.pos
		if b.skip(uint64(a.fixed)); !b.ok() {
			return false
		}
		if a.sibAt >= 0 {
			s := dbuf{data: b.data, pos: at + uint64(a.sibAt), order: b.order}
			w.sib, _ = c.ref(&s, uint64(a.sibForm))
		}
		return true
	}
	sibSet := false
	for _, at := range c.t.attrs[a.attrs[0]:a.attrs[1]] {
		form := uint64(at.form)
		if form == formIndirect {
			form = b.uleb()
		}
		if at.attr == dwarf.AttrSibling && !sibSet {
			// debug/dwarf's Val gives the first: a reference, or
			// a value of another class that is no sibling.
			sibSet = true
			if ref, ok := c.ref(b, form); ok {
				w.sib = ref
				continue
			}
		}
		if !c.skipForm(b, form) {
			return false
		}
	}
	return b.ok()
}

// ref reads a reference of form as debug/dwarf gives it as a
// dwarf.Offset (ok false for other forms, whose value is not read).
func (c *entryCursor) ref(b *dbuf, form uint64) (dwarf.Offset, bool) {
	var v uint64
	switch form {
	case formRefAddr:
		if c.key.v2 {
			v = b.addr(c.u.addrSize)
		} else {
			v = b.offset(c.u.is64)
		}
		return dwarf.Offset(v), b.ok()
	case formRef1:
		v = uint64(b.u8())
	case formRef2:
		v = uint64(b.u16())
	case formRef4:
		v = uint64(b.u32())
	case formRef8:
		v = b.u64()
	case formRefUdata:
		v = b.uleb()
	default:
		return 0, false
	}
	return dwarf.Offset(v + c.u.base), b.ok()
}

// skipForm moves b past a value of form; false for a form debug/dwarf
// does not read either.
func (c *entryCursor) skipForm(b *dbuf, form uint64) bool {
	if n := fixedFormSize(form, c.key); n >= 0 {
		b.skip(uint64(n))
		return b.ok()
	}
	switch form {
	case formString:
		b.cstring()
	case formBlock1:
		b.skip(uint64(b.u8()))
	case formBlock2:
		b.skip(uint64(b.u16()))
	case formBlock4:
		b.skip(uint64(b.u32()))
	case formBlock, formExprloc:
		b.skip(b.uleb())
	case formSdata, formUdata, formRefUdata, formStrx, formAddrx, formLoclistx, formRnglistx,
		formGNUAddrIndex, formGNUStrIndex:
		b.uleb()
	default:
		return false // formIndirect twice, or unknown
	}
	return b.ok()
}

// entry returns w's entry decoded by debug/dwarf; nil with true when w
// cannot have code (its abbreviation has neither low_pc nor ranges), nil
// with false when it cannot be read.
func (c *entryCursor) entry(w *walkEntry) (*dwarf.Entry, bool) {
	if c.r != nil {
		return c.e, true
	}
	if !w.mayCode {
		return nil, true
	}
	l := c.l
	if l.refs == nil {
		l.refs = l.d.Reader()
	}
	l.refs.Seek(w.off)
	e, err := l.refs.Next()
	if err != nil || e == nil || e.Offset != w.off {
		return nil, false
	}
	return e, true
}

// seek moves the cursor to off, an entry after the last one read (a
// sibling); false when off is outside the unit.
func (c *entryCursor) seek(off dwarf.Offset) bool {
	if c.r != nil {
		c.r.Seek(off)
		return true
	}
	if uint64(off) < c.u.data || uint64(off) >= c.u.end {
		return false
	}
	c.b.pos = uint64(off)
	return true
}

// validAddrSize reports whether debug/dwarf reads addresses of size n.
func validAddrSize(n uint8) bool { return n == 1 || n == 2 || n == 4 || n == 8 }

// dbuf reads DWARF's encodings from data at pos; past the end (or a
// value past it) it is broken for good and reads zeros.
type dbuf struct {
	data  []byte
	pos   uint64
	order binary.ByteOrder
	bad   bool
}

func (b *dbuf) ok() bool { return !b.bad }

func (b *dbuf) take(n uint64) []byte {
	if b.bad || b.pos > uint64(len(b.data)) || n > uint64(len(b.data))-b.pos {
		b.bad = true
		return nil
	}
	p := b.data[b.pos : b.pos+n]
	b.pos += n
	return p
}

func (b *dbuf) skip(n uint64) { b.take(n) }

func (b *dbuf) u8() uint8 {
	if p := b.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (b *dbuf) u16() uint16 {
	if p := b.take(2); p != nil {
		return b.order.Uint16(p)
	}
	return 0
}

func (b *dbuf) u32() uint32 {
	if p := b.take(4); p != nil {
		return b.order.Uint32(p)
	}
	return 0
}

func (b *dbuf) u64() uint64 {
	if p := b.take(8); p != nil {
		return b.order.Uint64(p)
	}
	return 0
}

// uleb reads an unsigned LEB128 (bits past 64 dropped, as debug/dwarf).
func (b *dbuf) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		p := b.take(1)
		if p == nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(p[0]&0x7f) << shift
		}
		if p[0] < 0x80 {
			return v
		}
	}
}

func (b *dbuf) cstring() {
	for !b.bad {
		if p := b.take(1); p != nil && p[0] == 0 {
			return
		}
	}
}

func (b *dbuf) offset(is64 bool) uint64 {
	if is64 {
		return b.u64()
	}
	return uint64(b.u32())
}

func (b *dbuf) addr(size uint8) uint64 {
	switch size {
	case 1:
		return uint64(b.u8())
	case 2:
		return uint64(b.u16())
	case 4:
		return uint64(b.u32())
	case 8:
		return b.u64()
	}
	b.bad = true
	return 0
}

// unitLength reads a unit's initial length: 32 bits, or 0xffffffff and
// 64 bits. debug/dwarf takes no unit of 4 GiB or more.
func (b *dbuf) unitLength() (uint64, bool) {
	n := uint64(b.u32())
	switch {
	case n == 0xffffffff:
		n = b.u64()
		if n != uint64(uint32(n)) {
			b.bad = true
		}
		return n, true
	case n >= 0xfffffff0:
		b.bad = true
	}
	return n, false
}
