package symcache

import (
	"cmp"
	"debug/dwarf"
	"debug/macho"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/macprof/macprof/images"
)

// DWARFLines is a LineSource built from DWARF: line tables for file:line,
// and the subprogram and inlined-subroutine tree for inlined frames. A
// compile unit is indexed on the first lookup inside its ranges, since a
// profile needs lines in a few dozen units of thousands (glibc, a -g
// libpython); so it keeps d, the sections in memory, as long as it lives.
// It is safe for concurrent use.
type DWARFLines struct {
	d     *dwarf.Data
	machO bool
	units []dunit        // compile and partial units with ranges, indexed on first need
	spans []cuSpan       // the ranges of units, sorted by lo
	maxHi []uint64       // maxHi[i] is the largest hi of spans[:i+1]
	rest  []*unitIndex   // units without ranges (only those that give lines), indexed at once
	tops  []dwarf.Offset // the top entry of every unit, in .debug_info order
	code  []bool         // code[i]: tops[i] is a compile or partial unit

	// mu serializes reading d, which is not documented as safe for
	// concurrent use, and guards the budgets and the name cache.
	mu         sync.Mutex
	rowsLeft   int
	nodesLeft  int
	rangesLeft int
	names      map[dwarf.Offset]string // a reference's resolved name
	refs       *dwarf.Reader           // seeks to referenced entries
}

// dunit is a unit whose ranges are known and whose index is built on the
// first lookup they cover.
type dunit struct {
	cu    *dwarf.Entry
	order int32 // index in tops: ties between units go to the later one
	idx   atomic.Pointer[unitIndex]
}

type cuSpan struct {
	lo, hi uint64
	unit   int32
}

// unitIndex is what one unit gives: its line rows, subprograms and
// inlined subroutines. It is immutable once built.
type unitIndex struct {
	order int32
	rows  []lineRow // sorted by addr, end rows first at an address
	files []string
	funcs []funcRange // subprogram ranges, sorted by lo
	nodes []dnode
}

type lineRow struct {
	addr uint64
	file int32
	line int32
	end  bool // end_sequence: no line from here
}

type funcRange struct {
	lo, hi uint64
	node   int32
}

type dnode struct {
	ranges   [][2]uint64
	name     string
	callFile int32 // index in files, -1 when unknown
	callLine int32
	children []int32
}

// maxDWARFDepth bounds how deep the inlined-subroutine tree is followed.
const maxDWARFDepth = 64

// maxLineRows, maxDWARFNodes and maxDWARFRanges bound what one object's
// DWARF may hold in memory once its units are read (about 24, 64 and 16
// bytes each): a hostile line program can make a row of every byte, and
// every subprogram can name the same long range list. Past them, the rest
// is left out (frames there get no line, or fewer inlined frames).
const (
	maxLineRows    = 1 << 24
	maxDWARFNodes  = 1 << 22
	maxDWARFRanges = 1 << 24
)

// maxCoveringUnits bounds how many units whose ranges cover one address
// are read, and maxSpanScan how many spans are looked at to find them:
// sane DWARF has one, and hostile overlapping ranges must not make every
// lookup read every unit.
const (
	maxCoveringUnits = 8
	maxSpanScan      = 64
)

// maxTopNulls bounds how many null entries in a row are read between
// units: no producer pads that much, and a hostile unit can make the
// reader return one forever.
const maxTopNulls = 1 << 12

// maxRefDepth bounds how many DW_AT_abstract_origin or DW_AT_specification
// references are followed to name an entry.
const maxRefDepth = 8

// OpenDSYM opens the dSYM at path (a bundle or its DWARF file) and returns
// its DWARF as a LineSource. uuid, when not empty, must match the dSYM's
// LC_UUID (in a universal dSYM, it chooses the slice).
func OpenDSYM(path, uuid string) (*DWARFLines, error) {
	file, err := DSYMFile(path)
	if err != nil {
		return nil, err
	}
	f, err := images.OpenMachOUUID(file, uuid)
	if err != nil {
		return nil, fmt.Errorf("dSYM: %w", err)
	}
	defer f.Close()
	mf, err := macho.NewFile(f.DWARFReader())
	if err != nil {
		return nil, fmt.Errorf("dSYM %s: %w", file, err)
	}
	d, err := mf.DWARF()
	if err != nil {
		return nil, fmt.Errorf("dSYM %s: %w", file, err)
	}
	l, err := newDWARFLines(d, true)
	if err != nil {
		return nil, fmt.Errorf("dSYM %s: %w", file, err)
	}
	return l, nil
}

// NewDWARFLines indexes d's compile units by their ranges; a unit's line
// table and subprograms are read on the first lookup inside it.
func NewDWARFLines(d *dwarf.Data) (*DWARFLines, error) { return newDWARFLines(d, false) }

// newDWARFLines is NewDWARFLines; machO tells DWARF of a Mach-O image,
// whose linkage names of asm labels keep the symbol's underscore.
func newDWARFLines(d *dwarf.Data, machO bool) (*DWARFLines, error) {
	l := &DWARFLines{
		d: d, machO: machO,
		rowsLeft: maxLineRows, nodesLeft: maxDWARFNodes, rangesLeft: maxDWARFRanges,
		names: map[dwarf.Offset]string{},
	}
	type pending struct {
		cu    *dwarf.Entry
		order int32
	}
	var noRanges []pending
	skip := newUnitSkipper(d)
	r := d.Reader()
	for nulls := 0; ; {
		cu, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("dwarf: %w", err)
		}
		if cu == nil {
			break
		}
		if cu.Tag == 0 {
			// Padding after a unit, or, when an unterminated LEB128
			// ends it, the same null entry forever (debug/dwarf
			// does not move past it): stop there.
			if nulls++; nulls > maxTopNulls {
				break
			}
			continue
		}
		nulls = 0
		skip.skip(r, cu)
		code := cu.Tag == dwarf.TagCompileUnit || cu.Tag == dwarf.TagPartialUnit
		order := int32(len(l.tops))
		l.tops = append(l.tops, cu.Offset)
		l.code = append(l.code, code)
		if !code {
			continue
		}
		rs, err := d.Ranges(cu)
		n := 0
		for _, rg := range rs {
			if err == nil && rg[0] < rg[1] && l.rangesLeft > 0 {
				l.spans = append(l.spans, cuSpan{rg[0], rg[1], int32(len(l.units))})
				l.rangesLeft--
				n++
			}
		}
		if n == 0 {
			// Without ranges, its rows and subprograms may cover any
			// address: it is read now and looked at on every lookup.
			noRanges = append(noRanges, pending{cu, order})
			continue
		}
		l.units = append(l.units, dunit{cu: cu, order: order})
	}
	sort.SliceStable(l.spans, func(i, j int) bool { return l.spans[i].lo < l.spans[j].lo })
	l.maxHi = make([]uint64, len(l.spans))
	var hi uint64
	for i, s := range l.spans {
		hi = max(hi, s.hi)
		l.maxHi[i] = hi
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range noRanges {
		if x := l.index(p.cu, p.order); len(x.rows) > 0 || len(x.funcs) > 0 {
			l.rest = append(l.rest, x)
		}
	}
	return l, nil
}

// unitSkipper moves a Reader past the children of a unit's top entry.
// debug/dwarf's SkipChildren jumps to the next unit at no cost, but in
// the last unit, or under an entry that is not a unit, it recurses once
// per level of nesting: hostile DWARF nested ten million deep (ten
// megabytes of .debug_info, a few kilobytes compressed) overflows the
// stack. So SkipChildren is called only when a later unit is known to
// exist; otherwise the children are read in a loop.
type unitSkipper struct {
	probe *dwarf.Reader
	// end is an offset past the first entry of some unit: an entry
	// whose first child (or the next unit's entry) lies before it is
	// not in the last unit.
	end dwarf.Offset
}

func newUnitSkipper(d *dwarf.Data) *unitSkipper {
	s := &unitSkipper{probe: d.Reader()}
	// No range holds the largest address, so SeekPC reads the top entry
	// of every unit and stops after the last one's (or earlier, at a
	// broken unit): what follows it bounds the units known to exist.
	r := d.Reader()
	r.SeekPC(^uint64(0))
	switch e, err := r.Next(); {
	case err != nil:
	case e == nil:
		// The data ends with that unit's top entry: skipping its
		// children reads nothing.
		s.end = ^dwarf.Offset(0)
	case e.Tag != 0: // a null entry does not tell its offset
		s.end = e.Offset
	}
	return s
}

// skip moves r, which has just read e at the top of a unit, past e's
// children.
func (s *unitSkipper) skip(r *dwarf.Reader, e *dwarf.Entry) {
	if !e.Children {
		return
	}
	if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
		s.probe.Seek(e.Offset)
		if _, err := s.probe.Next(); err == nil {
			if c, err := s.probe.Next(); err == nil && c != nil && c.Tag != 0 && c.Offset < s.end {
				r.SkipChildren() // a later unit exists: SkipChildren jumps to it
				return
			}
		}
	}
	for depth := 1; depth > 0; {
		c, err := r.Next()
		if err != nil || c == nil {
			return
		}
		if c.Tag == 0 {
			depth--
			continue
		}
		if c.Children {
			if sib, ok := c.Val(dwarf.AttrSibling).(dwarf.Offset); ok && sib > c.Offset {
				r.Seek(sib)
				continue
			}
			depth++
		}
	}
}

// unit returns the index of units[i], building it on first need.
func (l *DWARFLines) unit(i int32) *unitIndex {
	u := &l.units[i]
	if x := u.idx.Load(); x != nil {
		return x
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if x := u.idx.Load(); x != nil {
		return x
	}
	x := l.index(u.cu, u.order)
	u.idx.Store(x)
	return x
}

// index reads the line table and the subprogram tree of the unit whose
// top entry is cu; l.mu is held. A broken table or tree keeps what was
// read before the break.
func (l *DWARFLines) index(cu *dwarf.Entry, order int32) *unitIndex {
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
	var cuFiles []*dwarf.LineFile
	if lr, err := l.d.LineReader(cu); err == nil && lr != nil {
		var le dwarf.LineEntry
		for l.rowsLeft > 0 {
			if err := lr.Next(&le); err != nil {
				break // io.EOF, or a broken table
			}
			l.rowsLeft--
			row := lineRow{addr: le.Address, line: int32(le.Line), end: le.EndSequence, file: -1}
			if le.File != nil {
				row.file = intern(le.File.Name)
			}
			x.rows = append(x.rows, row)
		}
		cuFiles = lr.Files()
	}
	if cu.Children {
		l.walk(x, cu, cuFiles, intern)
	}
	// A unit's rows are mostly in order already (one sequence per
	// section): check before sorting.
	if !slices.IsSortedFunc(x.rows, compareRows) {
		slices.SortStableFunc(x.rows, compareRows)
	}
	slices.SortStableFunc(x.funcs, func(a, b funcRange) int { return cmp.Compare(a.lo, b.lo) })
	return x
}

// compareRows orders rows by address, an end_sequence first at an address
// (it ends the sequence before, and the row after it starts the next).
func compareRows(a, b lineRow) int {
	if c := cmp.Compare(a.addr, b.addr); c != 0 {
		return c
	}
	switch {
	case a.end && !b.end:
		return -1
	case b.end && !a.end:
		return 1
	}
	return 0
}

// walk adds the subprograms and inlined subroutines under cu to x; l.mu
// is held.
func (l *DWARFLines) walk(x *unitIndex, cu *dwarf.Entry, cuFiles []*dwarf.LineFile, intern func(string) int32) {
	r := l.d.Reader()
	r.Seek(cu.Offset)
	if e, err := r.Next(); err != nil || e == nil || e.Offset != cu.Offset {
		return
	}
	lang, _ := cu.Val(dwarf.AttrLanguage).(int64)
	typesHoldNoCode := cLanguage(lang)
	// stack holds, per depth, the nearest subprogram or inlined
	// subroutine node (-1 for none).
	stack := []int32{-1}
	for len(stack) > 0 {
		e, err := r.Next()
		if err != nil || e == nil {
			return
		}
		if e.Tag == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		if e.Children && holdsNoCode(e.Tag, typesHoldNoCode) {
			// Go past its children (struct members, enumerators,
			// call site parameters) without reading them when the
			// entry tells where its next sibling is.
			if sib, ok := e.Val(dwarf.AttrSibling).(dwarf.Offset); ok && sib > e.Offset {
				r.Seek(sib)
				continue
			}
		}
		parent := stack[len(stack)-1]
		cur := parent
		if e.Tag == dwarf.TagSubprogram || e.Tag == dwarf.TagInlinedSubroutine {
			if idx, ok := l.node(x, e, parent, cuFiles, intern); ok {
				cur = idx
			}
		}
		if e.Children {
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

// covering appends to out the indexes of the units whose ranges cover
// addr, building them on first need. When none does, it appends the unit
// whose range ends nearest before addr: a line sequence can end past its
// unit's high_pc (the padding after the unit's last function), and the
// index of all units at once gave those bytes a line.
func (l *DWARFLines) covering(addr uint64, out []*unitIndex) []*unitIndex {
	last := sort.Search(len(l.spans), func(i int) bool { return l.spans[i].lo > addr }) - 1
	var seen [maxCoveringUnits]int32
	n := 0
	for i, k := last, 0; i >= 0 && k < maxSpanScan && n < len(seen) && l.maxHi[i] > addr; i, k = i-1, k+1 {
		s := &l.spans[i]
		if addr >= s.hi || slices.Contains(seen[:n], s.unit) {
			continue
		}
		seen[n] = s.unit
		n++
		out = append(out, l.unit(s.unit))
	}
	if n == 0 && last >= 0 {
		out = append(out, l.unit(l.spans[last].unit))
	}
	return out
}

// row returns the last row of x at or before addr, or nil.
func (x *unitIndex) row(addr uint64) *lineRow {
	i := sort.Search(len(x.rows), func(i int) bool { return x.rows[i].addr > addr }) - 1
	if i < 0 {
		return nil
	}
	return &x.rows[i]
}

// fn returns the subprogram range of x holding addr, or nil. Of aliases
// (subprograms of the same start, as gas writes one per name of an
// assembly function), it is the last entry, as binutils' addr2line
// chooses; the index of all units at once left that to an unstable sort.
func (x *unitIndex) fn(addr uint64) *funcRange {
	i := sort.Search(len(x.funcs), func(i int) bool { return x.funcs[i].lo > addr }) - 1
	// Ranges do not usually overlap; look a few entries back in case.
	for k := 0; i >= 0 && k < 8; i, k = i-1, k+1 {
		if addr < x.funcs[i].hi {
			return &x.funcs[i]
		}
	}
	return nil
}

func (n *dnode) contains(addr uint64) bool {
	for _, r := range n.ranges {
		if addr >= r[0] && addr < r[1] {
			return true
		}
	}
	return false
}

// Lines implements LineSource: the frames at addr, innermost first; every
// frame but the last is inlined into the one after it.
func (l *DWARFLines) Lines(addr uint64) []Frame {
	var buf [maxCoveringUnits + 4]*unitIndex
	units := l.covering(addr, append(buf[:0], l.rest...))
	// Of several units, the row nearest before addr gives the line (a
	// tie going to a row that is not an end_sequence, then to the later
	// unit, as in one table of all units sorted stably) and the
	// subprogram starting nearest before addr the frames (a tie going to
	// the later unit, as between aliases of one unit).
	var row *lineRow
	var fn *funcRange
	var rowUnit, fnUnit *unitIndex
	for _, x := range units {
		if r := x.row(addr); r != nil && (row == nil || r.addr > row.addr ||
			r.addr == row.addr && (row.end && !r.end || row.end == r.end && x.order > rowUnit.order)) {
			row, rowUnit = r, x
		}
		if f := x.fn(addr); f != nil && (fn == nil || f.lo > fn.lo || f.lo == fn.lo && x.order > fnUnit.order) {
			fn, fnUnit = f, x
		}
	}
	var file string
	var line int
	hasLine := row != nil && !row.end && row.file >= 0
	if hasLine {
		file, line = rowUnit.files[row.file], int(row.line)
	}
	if fn == nil {
		if !hasLine {
			return nil
		}
		return []Frame{{File: file, Line: line}}
	}
	var chainBuf [maxDWARFDepth]int32
	chain := append(chainBuf[:0], fn.node)
	for len(chain) < maxDWARFDepth {
		n := &fnUnit.nodes[chain[len(chain)-1]]
		next := int32(-1)
		for _, c := range n.children {
			if fnUnit.nodes[c].contains(addr) {
				next = c
				break
			}
		}
		if next < 0 {
			break
		}
		chain = append(chain, next)
	}
	out := make([]Frame, len(chain))
	for k := len(chain) - 1; k >= 0; k-- {
		f := &out[len(chain)-1-k]
		f.Function = fnUnit.nodes[chain[k]].name
		f.Inlined = k > 0
		if k == len(chain)-1 {
			if hasLine {
				f.File, f.Line = file, line
			}
			continue
		}
		inner := &fnUnit.nodes[chain[k+1]]
		if inner.callFile >= 0 {
			f.File = fnUnit.files[inner.callFile]
		}
		f.Line = int(inner.callLine)
	}
	return out
}
