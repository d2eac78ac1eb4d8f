package symcache

import (
	"debug/dwarf"
	"encoding/binary"
)

// Line program opcodes (DWARF 5, section 6.2.5).
const (
	lnsCopy             = 1
	lnsAdvancePC        = 2
	lnsAdvanceLine      = 3
	lnsSetFile          = 4
	lnsSetColumn        = 5
	lnsNegateStmt       = 6
	lnsSetBasicBlock    = 7
	lnsConstAddPC       = 8
	lnsFixedAdvancePC   = 9
	lnsSetPrologueEnd   = 10
	lnsSetEpilogueBegin = 11
	lnsSetISA           = 12

	lneEndSequence      = 1
	lneSetAddress       = 2
	lneDefineFile       = 3
	lneSetDiscriminator = 4
)

// lineRows appends to x (whose rows are empty) the rows of cu's line table, whose header and
// file table lr (debug/dwarf's reader, just made) has read, running its
// program from .debug_line's bytes: the rows LineReader.Next gives, as
// lineRows, with no LineEntry copied per row (node: LineReader.Next was a
// fifth of its DWARF time). It returns false, having appended nothing,
// when it cannot: no bytes, or a program that defines a file (then the
// caller reads lr).
func (l *DWARFLines) lineRows(x *unitIndex, lr *dwarf.LineReader, cu *dwarf.Entry, intern func(string) int32) bool {
	if l.info == nil || l.info.line == nil {
		return false
	}
	u := l.info.unitOf(cu.Offset)
	off, ok := cu.Val(dwarf.AttrStmtList).(int64)
	if u == nil || !ok || off < 0 || off > int64(len(l.info.line)) {
		return false
	}
	h, ok := readLineHeader(l.info.line, uint64(off), u.addrSize, l.info.order)
	if !ok {
		return false
	}
	files := lr.Files()
	// fileIdx[i] is files[i]'s index in x.files, -2 until met.
	fileIdx := make([]int32, len(files))
	for i := range fileIdx {
		fileIdx[i] = -2
	}
	fileOf := func(i int) int32 {
		if i < 0 || i >= len(files) || files[i] == nil {
			return -1
		}
		if fileIdx[i] == -2 {
			fileIdx[i] = intern(files[i].Name)
		}
		return fileIdx[i]
	}
	// The rows go to a buffer kept for the next unit, and are copied out
	// at their size: a unit's count is not known before its program
	// has run (node: 2.8 to 5 bytes of program a row).
	rows := l.rowBuf[:0]
	defer func() {
		if cap(rows) <= maxKeptRows {
			l.rowBuf = rows[:0]
		}
	}()
	b := lineBuf{dbuf{data: l.info.line[h.program:h.end], order: l.info.order}}
	var addr uint64
	var opIndex, line, fileIndex int
	reset := func() { addr, opIndex, line, fileIndex = 0, 0, 1, 1 }
	reset()
	advance := func(n int) {
		i := opIndex + n
		addr += uint64(h.minInst * (i / h.maxOps))
		opIndex = i % h.maxOps
	}
	for b.left() > 0 && !b.bad {
		emit, end := false, false
		op := int(b.u8())
		switch {
		case op >= h.opcodeBase:
			adj := op - h.opcodeBase
			advance(adj / h.lineRange)
			line += h.lineBase + adj%h.lineRange
			emit = true
		case op == 0:
			n := b.uleb()
			before := b.left()
			switch b.u8() {
			case lneEndSequence:
				emit, end = true, true
			case lneSetAddress:
				switch h.addrSize {
				case 1:
					addr = uint64(b.u8())
				case 2:
					addr = uint64(b.u16())
				case 4:
					addr = uint64(b.u32())
				case 8:
					addr = b.u64()
				default:
					b.bad = true
				}
			case lneDefineFile:
				l.rowsLeft += len(rows)
				return false
			case lneSetDiscriminator:
				b.uleb()
			}
			// As debug/dwarf, in its 32-bit offsets.
			b.skip(uint64(uint32(n) - uint32(before-b.left())))
		case op == lnsCopy:
			emit = true
		case op == lnsAdvancePC:
			advance(int(b.uleb()))
		case op == lnsAdvanceLine:
			line += int(b.sleb())
		case op == lnsSetFile:
			fileIndex = int(b.uleb())
		case op == lnsSetColumn, op == lnsSetISA:
			b.uleb()
		case op == lnsConstAddPC:
			advance((255 - h.opcodeBase) / h.lineRange)
		case op == lnsFixedAdvancePC:
			addr += uint64(b.u16())
		case op == lnsNegateStmt, op == lnsSetBasicBlock, op == lnsSetPrologueEnd, op == lnsSetEpilogueBegin:
		default:
			for range h.opcodeLengths[op] {
				b.uleb()
			}
		}
		if b.bad {
			break // LineReader.Next gives no row from a step that broke
		}
		if emit {
			if l.rowsLeft <= 0 {
				break
			}
			l.rowsLeft--
			row := lineRow{addr: addr, line: int32(line), file: endRow}
			if !end {
				row.file = fileOf(fileIndex)
			}
			rows = append(rows, row)
		}
		if end {
			reset()
		}
	}
	x.rows = append(x.rows, rows...)
	return true
}

// maxKeptRows bounds the buffer of line rows a DWARFLines keeps between
// units (24 bytes a row).
const maxKeptRows = 1 << 16

// lineHeader is what running a line program needs of its header.
type lineHeader struct {
	program, end  uint64 // the program's bytes in .debug_line
	addrSize      uint8
	minInst       int
	maxOps        int
	lineBase      int
	lineRange     int
	opcodeBase    int
	opcodeLengths [256]int
}

// readLineHeader reads the line table header at off as LineReader's
// readHeader does; false where it would fail. addrSize is the unit's,
// which tables before version 5 use.
func readLineHeader(line []byte, off uint64, addrSize uint8, order binary.ByteOrder) (lineHeader, bool) {
	var h lineHeader
	b := dbuf{data: line, pos: off, order: order}
	n, is64 := b.unitLength()
	if !b.ok() || n > uint64(len(line))-b.pos {
		return h, false
	}
	h.end = b.pos + n
	vers := b.u16()
	if vers < 2 || vers > 5 {
		return h, false
	}
	h.addrSize = addrSize
	if vers >= 5 {
		h.addrSize = b.u8()
		b.u8() // segment selector size
	}
	hl := b.offset(is64)
	if !b.ok() || hl > h.end-b.pos {
		return h, false
	}
	h.program = b.pos + hl
	h.minInst = int(b.u8())
	h.maxOps = 1
	if vers >= 4 {
		h.maxOps = int(b.u8())
	}
	b.u8() // default_is_stmt
	h.lineBase = int(int8(b.u8()))
	h.lineRange = int(b.u8())
	h.opcodeBase = int(b.u8())
	for i := 1; i < h.opcodeBase; i++ {
		h.opcodeLengths[i] = int(b.u8())
	}
	return h, b.ok() && h.maxOps != 0 && h.lineRange != 0 && h.program <= h.end
}

// lineBuf reads a line program as debug/dwarf's buf does: an unsigned
// or signed LEB128 that runs off the end reads as 0 and moves nothing
// (no error); other reads past the end break it, as dbuf's do.
type lineBuf struct {
	dbuf
}

// left is how many bytes are still to read.
func (b *lineBuf) left() int { return len(b.data) - int(b.pos) }

func (b *lineBuf) varint() (c uint64, bits uint) {
	rest := b.data[b.pos:]
	for i := 0; i < len(rest); i++ {
		c |= uint64(rest[i]&0x7f) << bits
		bits += 7
		if rest[i]&0x80 == 0 {
			b.pos += uint64(i + 1)
			return c, bits
		}
	}
	return 0, 0
}

func (b *lineBuf) uleb() uint64 {
	c, _ := b.varint()
	return c
}

func (b *lineBuf) sleb() int64 {
	ux, bits := b.varint()
	x := int64(ux)
	if x&(1<<(bits-1)) != 0 {
		x |= -1 << bits
	}
	return x
}
