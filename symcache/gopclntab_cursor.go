package symcache

import "encoding/binary"

// pcCursor evaluates one pc-value table as pcvalue does, keeping its place
// between lookups: a pc at or after the last one continues from there, so
// a function's addresses in increasing order read its table once; an
// earlier pc starts again from the entry.
type pcCursor struct {
	tab   []byte // the table from its start; nil when the function has none
	off   int    // where in tab the next step starts
	entry uint64
	val   int64
	lo    uint64 // val holds for lo <= pc < cur (lo = cur = entry before the first step)
	cur   uint64
	span  uint64 // cur - lo, or 0 where cur wrapped below lo
	// quantum is the table's pc quantum (Gopclntab.quantum).
	quantum uint32
	started bool // a step was taken since the entry
	done    bool // no step past cur: the table ended or is damaged there
}

// start points c at the table at off in t.pctab for a function at entry;
// ok false (or off outside the table) leaves it answering nothing.
func (c *pcCursor) start(t *Gopclntab, off uint32, entry uint64, ok bool) {
	*c = pcCursor{entry: entry, quantum: t.quantum}
	if ok && uint64(off) < uint64(len(t.pctab)) {
		c.tab = t.pctab[off:]
	}
	c.rewind()
}

func (c *pcCursor) rewind() {
	c.off, c.val, c.lo, c.cur, c.span, c.started, c.done = 0, -1, c.entry, c.entry, 0, false, false
}

// value returns what t.pcvalue(off, entry, pc) returns. It is inlined
// into the caller, and with it the lookups in the last answer's range
// (most of a pc-file table's, and of a pc-line table's where a function's
// addresses are dense).
func (c *pcCursor) value(pc uint64) (int64, bool) {
	if pc-c.lo < c.span || c.walk(pc) { // lo <= pc < cur, or a step on
		return c.val, true
	}
	return 0, false
}

// walk moves c to the range that holds pc, for a pc outside the last
// answer's, and reports whether there is one (its value is then c.val).
func (c *pcCursor) walk(pc uint64) bool {
	if c.tab == nil {
		return false
	}
	if pc < c.lo {
		c.rewind()
	}
	if c.started && pc < c.cur {
		return true
	}
	if c.done {
		return false
	}
	// The walk keeps its place in locals, stored back once: it was the
	// largest part of symbolizing a Go binary.
	tab, i := c.tab, c.off
	val, lo, cur, started := c.val, c.lo, c.cur, c.started
	q := uint64(c.quantum)
	for i < len(tab) {
		uv, n := uint64(tab[i]), 1 // most deltas are one byte
		if uv >= 0x80 {
			if uv, n = binary.Uvarint(tab[i:]); n <= 0 {
				break
			}
		}
		if uv == 0 && started {
			break // the table's end
		}
		j := i + n
		if j >= len(tab) {
			break
		}
		d, m := uint64(tab[j]), 1
		if d >= 0x80 {
			if d, m = binary.Uvarint(tab[j:]); m <= 0 {
				break
			}
		}
		i, started = j+m, true
		val += int64(uv>>1) ^ -int64(uv&1) // zig-zag
		lo, cur = cur, cur+d*q
		if pc < cur {
			c.off, c.val, c.lo, c.cur, c.started = i, val, lo, cur, true
			c.setSpan()
			return true
		}
	}
	c.off, c.val, c.lo, c.cur, c.started, c.done = i, val, lo, cur, started, true
	c.setSpan()
	return false
}

// setSpan sets span from lo and cur.
func (c *pcCursor) setSpan() {
	c.span = 0
	if c.cur >= c.lo {
		c.span = c.cur - c.lo
	}
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
	// files caches file names by their offset in the file table: the
	// functions of one package name the same files.
	files [256]cachedFile
}

// cachedFile is an entry of goLineCursor.files.
type cachedFile struct {
	off  uint32
	set  bool
	name string
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
		if v, ok := c.inl.value(addr); ok && v >= 0 {
			return "", "", 0, false
		}
	}
	if !c.hasLineTabs {
		return "", "", 0, false
	}
	ln, ok := c.line.value(addr)
	if !ok || ln <= 0 || ln > 1<<30 {
		return "", "", 0, false
	}
	fno, ok := c.file.value(addr)
	if !ok || fno < 0 || fno > 1<<30 {
		return c.name, "", int(ln), true
	}
	if fno != c.fno {
		c.fno, c.fileName = fno, c.fileNameOf(fno)
	}
	return c.name, c.fileName, int(ln), true
}

// fileNameOf returns t.fileName(c.fn, fno), from c.files when there.
func (c *goLineCursor) fileNameOf(fno int64) string {
	t := c.t
	if t.version == go12 {
		return t.fileName(c.fn, fno)
	}
	off, ok := t.fileOff(c.fn, fno)
	if !ok {
		return ""
	}
	e := &c.files[off%uint32(len(c.files))]
	if !e.set || e.off != off {
		*e = cachedFile{off: off, set: true, name: cstring(t.files, uint64(off))}
	}
	return e.name
}
