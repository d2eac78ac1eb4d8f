package symcache

// outerLiner is a LineSource that can answer an address without building
// a frame per inlined call: what a caller printing one line per address
// (`macprof symbolize` without --inline) needs.
type outerLiner interface {
	// OuterLine returns the name the last frame of Lines(addr) has (""
	// when Lines leaves it to the symbol table) and the file:line of its
	// first frame; ok is false when Lines(addr) has no frame.
	OuterLine(addr uint64) (function, file string, line int, ok bool)
}

// OuterLine returns what Lines(addr) of the table's line source says in
// one line: the outermost function's name as the line source gives it
// ("" to take the symbol table's) and the innermost file:line ("" and 0
// when unknown). ok is false when the table has no line source or it has
// nothing at addr. It allocates nothing for Go and DWARF line tables.
func (t *Table) OuterLine(addr uint64) (function, file string, line int, ok bool) {
	if t.lines == nil {
		return "", "", 0, false
	}
	return outerLine(t.lines, addr)
}

func outerLine(src LineSource, addr uint64) (function, file string, line int, ok bool) {
	if o, isOuter := src.(outerLiner); isOuter {
		return o.OuterLine(addr)
	}
	fs := src.Lines(addr)
	if len(fs) == 0 {
		return "", "", 0, false
	}
	return fs[len(fs)-1].Function, fs[0].File, fs[0].Line, true
}

// OuterLine implements outerLiner.
func (l *lazyLines) OuterLine(addr uint64) (function, file string, line int, ok bool) {
	if s := l.source(); s != nil {
		return outerLine(s, addr)
	}
	return "", "", 0, false
}

// OuterLine implements outerLiner: the function of the pclntab entry and
// the pc-file and pc-line tables' position at addr, the innermost inlined
// body's, as the first frame of Lines. Without go:func.* inlined code has
// no frame, as in Lines; with it, the inline tree is not read (Lines
// would only check it).
func (t *Gopclntab) OuterLine(addr uint64) (function, file string, line int, ok bool) {
	i, found := t.find(addr)
	if !found {
		return "", "", 0, false
	}
	entry := t.pc(i)
	if t.gofunc == nil && t.inlIndex(i, entry, addr) >= 0 {
		return "", "", 0, false
	}
	file, line, found = t.fileLine(i, entry, addr)
	if !found {
		return "", "", 0, false
	}
	return t.funcName(i), file, line, true
}

// OuterLine implements outerLiner: Lines without reading the inlined
// subroutines, whose frames the answer does not need (units indexed
// apart from those of Lines, without them).
func (l *DWARFLines) OuterLine(addr uint64) (function, file string, line int, ok bool) {
	fn, fnUnit, file, line, hasLine := l.locate(addr, indexOuter)
	if fn == nil {
		return "", file, line, hasLine
	}
	return fnUnit.nodes[fn.node].name, file, line, true
}

// LineCursor answers Table.OuterLine for one caller, which must not share
// it: addresses of one Go function given in increasing order continue the
// walk of its pc-line and pc-file tables where the previous one stopped,
// instead of walking them again from the function's entry, so that a
// sorted batch reads each function's tables once. Other line sources are
// asked as Table.OuterLine asks them.
type LineCursor struct {
	t        *Table
	src      LineSource
	resolved bool
	g        goLineCursor
}

// LineCursor returns a cursor over the table's lines.
func (t *Table) LineCursor() *LineCursor { return &LineCursor{t: t} }

// OuterLine returns what the table's OuterLine(addr) returns.
func (c *LineCursor) OuterLine(addr uint64) (function, file string, line int, ok bool) {
	if c.t.lines == nil {
		return "", "", 0, false
	}
	if !c.resolved {
		c.resolved = true
		c.src = c.t.lines
		if l, lazy := c.src.(*lazyLines); lazy {
			if s := l.source(); s != nil {
				c.src = s
			}
		}
		if g, isGo := c.src.(*Gopclntab); isGo {
			c.g.t = g
		}
	}
	if c.g.t != nil {
		return c.g.outerLine(addr)
	}
	return outerLine(c.src, addr)
}
