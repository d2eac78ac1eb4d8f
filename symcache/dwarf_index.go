package symcache

import (
	"cmp"
	"debug/dwarf"
	"slices"
	"sort"
	"strings"
)

// index reads the line table of the unit whose top entry is cu and, as
// what says, its subprograms (indexOuter) and their inlined subroutines
// (indexFull); l.mu is held. The rows and files of rows, another index of
// the unit when not nil, are taken instead of reading the line table
// again (node: most units are read for the padding past their ranges and
// for an address inside them). A broken table or tree keeps what was read
// before the break.
func (l *DWARFLines) index(cu *dwarf.Entry, order int32, what int, rows *unitIndex) *unitIndex {
	x := &unitIndex{order: order}
	fileIdx := map[string]int32{}
	intern := func(name string) int32 {
		if i, ok := fileIdx[name]; ok {
			return i
		}
		i := int32(len(x.files))
		x.files = append(x.files, name)
		fileIdx[name] = i
		return i
	}
	if rows != nil {
		x.rows = rows.rows // sorted, and read only
		for _, f := range rows.files {
			intern(f)
		}
	}
	var cuFiles []*dwarf.LineFile
	// Outer and row indexes need the file table only for the rows.
	if rows == nil || what == indexFull {
		if lr, err := l.d.LineReader(cu); err == nil && lr != nil {
			if rows == nil && !l.lineRows(x, lr, cu, intern) {
				l.readRows(x, lr, intern)
			}
			cuFiles = lr.Files()
		}
	}
	if what != indexRows && cu.Children {
		l.walk(x, cu, cuFiles, intern, what == indexOuter)
	}
	// A unit's rows are mostly in order already (one sequence per
	// section): check before sorting.
	if rows == nil && !slices.IsSortedFunc(x.rows, compareRows) {
		slices.SortStableFunc(x.rows, compareRows)
	}
	slices.SortStableFunc(x.funcs, func(a, b funcRange) int { return cmp.Compare(a.lo, b.lo) })
	return x
}

// readRows appends the rows of lr to x, through debug/dwarf's reader (see
// lineRows); l.mu is held.
func (l *DWARFLines) readRows(x *unitIndex, lr *dwarf.LineReader, intern func(string) int32) {
	var le dwarf.LineEntry
	// Rows of one file come in runs, and the reader gives each file of
	// its table as one *LineFile: the last one's index saves a map
	// lookup per row.
	var lastFile *dwarf.LineFile
	lastIdx := int32(-1)
	for l.rowsLeft > 0 {
		if err := lr.Next(&le); err != nil {
			break // io.EOF, or a broken table
		}
		l.rowsLeft--
		row := lineRow{addr: le.Address, line: int32(le.Line), file: -1}
		if le.EndSequence {
			row.file = endRow
		} else if le.File != nil {
			if le.File != lastFile {
				lastFile, lastIdx = le.File, intern(le.File.Name)
			}
			row.file = lastIdx
		}
		x.rows = append(x.rows, row)
	}
}

// compareRows orders rows by address, an end_sequence first at an address
// (it ends the sequence before, and the row after it starts the next).
func compareRows(a, b lineRow) int {
	if c := cmp.Compare(a.addr, b.addr); c != 0 {
		return c
	}
	switch {
	case a.isEnd() && !b.isEnd():
		return -1
	case b.isEnd() && !a.isEnd():
		return 1
	}
	return 0
}

// walk adds the subprograms and inlined subroutines under cu to x, or,
// when outer, the subprograms alone, going past what lies inside each
// (its parameters, variables, blocks and inlined calls: most of the
// entries of optimized C) where it tells where its next sibling is; l.mu
// is held.
func (l *DWARFLines) walk(x *unitIndex, cu *dwarf.Entry, cuFiles []*dwarf.LineFile, intern func(string) int32, outer bool) {
	c, ok := l.cursor(cu)
	if !ok {
		return
	}
	lang, _ := cu.Val(dwarf.AttrLanguage).(int64)
	typesHoldNoCode := cLanguage(lang)
	// stack holds, per depth, the nearest subprogram or inlined
	// subroutine node (-1 for none).
	stack := []int32{-1}
	var w walkEntry
	for len(stack) > 0 {
		if !c.next(&w) {
			return
		}
		if w.tag == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		if w.children && holdsNoCode(w.tag, typesHoldNoCode) && w.sib > w.off {
			// Go past its children (struct members, enumerators,
			// call site parameters) without reading them when the
			// entry tells where its next sibling is.
			if !c.seek(w.sib) {
				return
			}
			continue
		}
		parent := stack[len(stack)-1]
		cur := parent
		if w.tag == dwarf.TagSubprogram || !outer && w.tag == dwarf.TagInlinedSubroutine {
			e, ok := c.entry(&w)
			if !ok {
				return
			}
			if e != nil {
				if idx, ok := l.node(x, e, parent, cuFiles, intern); ok {
					cur = idx
				}
			}
			if outer && w.children && w.sib > w.off {
				if !c.seek(w.sib) {
					return
				}
				continue
			}
		}
		if w.children {
			if len(stack) > 1<<16 {
				return // deeper than any compiler writes: the rest is left out
			}
			stack = append(stack, cur)
		}
	}
}

// holdsNoCode reports whether an entry of tag cannot have a subprogram or
// inlined subroutine below it: enumerations, arrays, function types and
// call sites anywhere, structures and unions in C (structs and classes of
// other languages can hold member functions).
func holdsNoCode(tag dwarf.Tag, c bool) bool {
	switch tag {
	case dwarf.TagEnumerationType, dwarf.TagArrayType, dwarf.TagSubroutineType, dwarf.TagCallSite, tagGNUCallSite:
		return true
	case dwarf.TagStructType, dwarf.TagUnionType:
		return c
	}
	return false
}

// tagGNUCallSite is DW_TAG_GNU_call_site, what gcc writes for a call
// site before DWARF 5.
const tagGNUCallSite dwarf.Tag = 0x4109

// cLanguage reports whether DW_AT_language lang is a version of C.
func cLanguage(lang int64) bool {
	switch lang {
	case 0x1, 0x2, 0xc, 0x1d, 0x2c: // DW_LANG_C89, C, C99, C11, C17
		return true
	}
	return false
}

// node adds the subprogram or inlined subroutine e, under parent, to x
// when it has code and the budgets allow; l.mu is held.
func (l *DWARFLines) node(x *unitIndex, e *dwarf.Entry, parent int32, cuFiles []*dwarf.LineFile, intern func(string) int32) (int32, bool) {
	if l.nodesLeft <= 0 || l.rangesLeft <= 0 {
		return 0, false
	}
	rs, err := l.d.Ranges(e)
	if err != nil || len(rs) == 0 {
		return 0, false
	}
	inlined := e.Tag == dwarf.TagInlinedSubroutine
	// A subprogram's ranges are stored twice: in its node and its funcs.
	cost := len(rs)
	if e.Tag == dwarf.TagSubprogram {
		cost *= 2
	}
	if cost > l.rangesLeft {
		l.rangesLeft = 0
		return 0, false
	}
	l.rangesLeft -= cost
	l.nodesLeft--
	n := dnode{ranges: rs, callFile: -1, name: l.nodeName(e)}
	if inlined {
		if cf, ok := e.Val(dwarf.AttrCallFile).(int64); ok && cf >= 0 && cf < int64(len(cuFiles)) && cuFiles[cf] != nil {
			n.callFile = intern(cuFiles[cf].Name)
		}
		if cl, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
			n.callLine = int32(cl)
		}
	}
	idx := int32(len(x.nodes))
	x.nodes = append(x.nodes, n)
	switch {
	case inlined && parent >= 0:
		x.nodes[parent].children = append(x.nodes[parent].children, idx)
	case !inlined:
		for _, rg := range rs {
			x.funcs = append(x.funcs, funcRange{rg[0], rg[1], idx})
		}
	}
	return idx, true
}

// maxRefDepth bounds how many DW_AT_abstract_origin or DW_AT_specification
// references are followed to name an entry.
const maxRefDepth = 8

// nodeName names a node after the entry it refers to (a concrete instance
// after its abstract origin, a definition after its declaration), else
// after e itself, as llvm-symbolizer does; l.mu is held.
func (l *DWARFLines) nodeName(e *dwarf.Entry) string {
	if ref := entryRef(e); ref != 0 {
		if name, ok := l.names[ref]; ok && name != "" {
			return name
		} else if !ok {
			name = l.resolve(ref)
			l.names[ref] = name
			if name != "" {
				return name
			}
		}
	}
	return l.ownName(e)
}

// resolve returns the name of the entry at off, following its references
// up to maxRefDepth deep; l.mu is held. Only subprograms and inlined
// subroutines of compile and partial units name others.
func (l *DWARFLines) resolve(off dwarf.Offset) string {
	if l.refs == nil {
		l.refs = l.d.Reader()
	}
	for depth := 0; ; depth++ {
		// The unit holding off must be a compile or partial unit.
		u := sort.Search(len(l.tops), func(i int) bool { return l.tops[i] > off }) - 1
		if u < 0 || !l.code[u] {
			return ""
		}
		l.refs.Seek(off)
		e, err := l.refs.Next()
		if err != nil || e == nil || e.Offset != off ||
			(e.Tag != dwarf.TagSubprogram && e.Tag != dwarf.TagInlinedSubroutine) {
			return ""
		}
		if name := l.ownName(e); name != "" {
			return name
		}
		if off = entryRef(e); off == 0 || depth >= maxRefDepth {
			return ""
		}
	}
}

// ownName is e's linkage name, else its name.
func (l *DWARFLines) ownName(e *dwarf.Entry) string {
	name, _ := e.Val(dwarf.AttrName).(string)
	if s, _ := e.Val(dwarf.AttrLinkageName).(string); s != "" {
		// glibc renames its functions for calls from inside the
		// library with asm labels (hidden_proto: __GI___libc_malloc
		// for __libc_malloc): the name is the one users know.
		if strings.HasPrefix(s, "__GI_") && name != "" {
			return name
		}
		// An asm label keeps the Mach-O underscore in
		// DW_AT_linkage_name: drop it as in the symbol table.
		if l.machO && (strings.HasPrefix(s, "__") || strings.HasPrefix(s, "_$")) {
			return s[1:]
		}
		return s
	}
	// GNU as names an assembler function by its first label, which
	// in glibc's system call wrappers is the hidden alias (__GI_getpid
	// for getpid, __GI___getpid for __getpid).
	if len(name) > len("__GI_") && strings.HasPrefix(name, "__GI_") {
		return name[len("__GI_"):]
	}
	return name
}

// entryRef is e's DW_AT_abstract_origin, else its DW_AT_specification, or 0.
func entryRef(e *dwarf.Entry) dwarf.Offset {
	if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
		return o
	}
	o, _ := e.Val(dwarf.AttrSpecification).(dwarf.Offset)
	return o
}
