package symcache

import "encoding/binary"

// pcCursor evaluates one pc-value table as pcvalue does, keeping its place
// between lookups: a pc at or after the last one continues from there, so
// a function's addresses in increasing order read its table once; an
// earlier pc starts again from the entry.
type pcCursor struct {
	tab   []byte // the table from its start; nil when the function has none
	p     []byte // what is left of it
	entry uint64
	val   int64
	lo    uint64 // val holds for lo <= pc < cur (lo 0 for the first range)
	cur   uint64
	steps int  // steps taken since the entry
	done  bool // no step past cur: the table ended or is damaged there
}

// start points c at the table at off in t.pctab for a function at entry;
// ok false (or off outside the table) leaves it answering nothing.
func (c *pcCursor) start(t *Gopclntab, off uint32, entry uint64, ok bool) {
	*c = pcCursor{entry: entry}
	if ok && uint64(off) < uint64(len(t.pctab)) {
		c.tab = t.pctab[off:]
	}
	c.rewind()
}

func (c *pcCursor) rewind() {
	c.p, c.val, c.lo, c.cur, c.steps, c.done = c.tab, -1, 0, c.entry, 0, false
}

// value returns what t.pcvalue(off, entry, pc) returns.
func (c *pcCursor) value(pc uint64, quantum uint32) (int64, bool) {
	if c.tab == nil {
		return 0, false
	}
	if pc < c.lo {
		c.rewind()
	}
	if c.steps > 0 && pc < c.cur {
		return c.val, true
	}
	if c.done {
		return 0, false
	}
	// The walk keeps its place in locals, stored back once: it was the
	// largest part of symbolizing a Go binary.
	p, val, lo, cur, steps := c.p, c.val, c.lo, c.cur, c.steps
	for len(p) > 0 {
		uv, n := uint64(p[0]), 1 // most deltas are one byte
		if uv >= 0x80 {
			uv, n = binary.Uvarint(p)
		}
		if n <= 0 || (uv == 0 && steps > 0) {
			break
		}
		rest := p[n:]
		next := val
		if uv&1 != 0 {
			next += int64(^(uv >> 1))
		} else {
			next += int64(uv >> 1)
		}
		if len(rest) == 0 {
			break
		}
		d, m := uint64(rest[0]), 1
		if d >= 0x80 {
			d, m = binary.Uvarint(rest)
		}
		if m <= 0 {
			break
		}
		p = rest[m:]
		if steps > 0 {
			lo = cur
		}
		steps++
		val = next
		cur += d * uint64(quantum)
		if pc < cur {
			c.p, c.val, c.lo, c.cur, c.steps = p, val, lo, cur, steps
			return val, true
		}
	}
	c.p, c.val, c.lo, c.cur, c.steps, c.done = p, val, lo, cur, steps, true
	return 0, false
}

// goLineCursor answers Gopclntab.OuterLine for one caller: while the
// addresses stay in one function it keeps the function's name and its
// pc-line, pc-file and inline-index tables' places (see pcCursor).
type goLineCursor struct {
	t           *Gopclntab
	fn          uint32
	entry, end  uint64
	set         bool
	name        string
	noInlTree   bool // inlined code gets no frame (no go:func.*)
	line, file  pcCursor
	inl         pcCursor
	hasLineTabs bool
	// fno is the file number last looked up in the function, fileName
	// its name (-1: none yet): the file rarely changes within one.
	fno      int64
	fileName string
}

// outerLine returns what c.t.OuterLine(addr) returns.
func (c *goLineCursor) outerLine(addr uint64) (function, file string, line int, ok bool) {
	t := c.t
	if !c.set || addr < c.entry || addr >= c.end {
		var i uint32
		var found bool
		if c.set && addr >= c.end && c.fn+2 <= t.nfunc && addr < t.pc(c.fn+2) {
			// The next function (find's answer in a sorted table):
			// addresses in increasing order meet each in turn.
			i, found = c.fn+1, true
		} else {
			i, found = t.find(addr)
		}
		if !found {
			return "", "", 0, false
		}
		c.fn, c.entry, c.end, c.set = i, t.pc(i), t.pc(i+1), true
		c.fno = -1
		c.name = t.funcName(i)
		lnOff, ok1 := t.funcField(i, 6)
		fileOff, ok2 := t.funcField(i, 5)
		c.hasLineTabs = ok1 && ok2 && lnOff != 0
		c.line.start(t, lnOff, c.entry, c.hasLineTabs)
		c.file.start(t, fileOff, c.entry, c.hasLineTabs)
		c.noInlTree = t.gofunc == nil
		off, hasInl := uint32(0), false
		if c.noInlTree && t.version != go12 && t.npcdata(i) > pcdataInlTreeIndex {
			off, hasInl = t.funcField(i, t.fixedWords()+1+pcdataInlTreeIndex)
			hasInl = hasInl && off != 0
		}
		c.inl.start(t, off, c.entry, hasInl)
	}
	if c.noInlTree {
		if v, ok := c.inl.value(addr, t.quantum); ok && v >= 0 {
			return "", "", 0, false
		}
	}
	if !c.hasLineTabs {
		return "", "", 0, false
	}
	ln, ok := c.line.value(addr, t.quantum)
	if !ok || ln <= 0 || ln > 1<<30 {
		return "", "", 0, false
	}
	fno, ok := c.file.value(addr, t.quantum)
	if !ok || fno < 0 || fno > 1<<30 {
		return c.name, "", int(ln), true
	}
	if fno != c.fno {
		c.fno, c.fileName = fno, t.fileName(c.fn, fno)
	}
	return c.name, c.fileName, int(ln), true
}
