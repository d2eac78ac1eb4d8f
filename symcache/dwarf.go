package symcache

import (
	"debug/dwarf"
	"debug/macho"
	"fmt"
	"sort"
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
	info  *dwarfInfo // d's entries as bytes, where the opener kept them
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
	rowBuf     []lineRow               // where lineRows runs a program

	spanHint atomic.Int32 // the span the last lookup found (lastSpan)
}

// dunit is a unit whose ranges are known and whose index is built on the
// first lookup they cover.
type dunit struct {
	cu    *dwarf.Entry
	order int32 // index in tops: ties between units go to the later one
	idx   atomic.Pointer[unitIndex]
	// rows is the unit's line table alone, read when an address past
	// its ranges needs only that (see covering); outer is its line table
	// and subprograms without what lies inside them (inlined
	// subroutines), all OuterLine needs.
	rows, outer atomic.Pointer[unitIndex]
}

// How much of a unit index reads: its line table alone, also its
// subprograms (not what lies inside them), or also their inlined
// subroutines.
const (
	indexRows = iota
	indexOuter
	indexFull
)

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
	// rowHint is the row the last lookup found (see lastSpan).
	rowHint atomic.Int32
}

// lineRow is one row of a line table, 16 bytes.
type lineRow struct {
	addr uint64
	file int32 // index in files, -1 for none, endRow for an end_sequence
	line int32
}

// endRow is the file of an end_sequence row: no line from its address.
const endRow = -2

func (r *lineRow) isEnd() bool { return r.file == endRow }

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
	l, err := newDWARFLines(d, nil, true)
	if err != nil {
		return nil, fmt.Errorf("dSYM %s: %w", file, err)
	}
	return l, nil
}

// NewDWARFLines indexes d's compile units by their ranges; a unit's line
// table and subprograms are read on the first lookup inside it.
func NewDWARFLines(d *dwarf.Data) (*DWARFLines, error) { return newDWARFLines(d, nil, false) }

// newDWARFLines is NewDWARFLines; info, when not nil, is d's entries as
// bytes; machO tells DWARF of a Mach-O image, whose linkage names of asm
// labels keep the symbol's underscore.
func newDWARFLines(d *dwarf.Data, info *dwarfInfo, machO bool) (*DWARFLines, error) {
	l := &DWARFLines{
		d: d, info: info, machO: machO,
		rowsLeft: maxLineRows, nodesLeft: maxDWARFNodes, rangesLeft: maxDWARFRanges,
		names: map[dwarf.Offset]string{},
	}
	type pending struct {
		cu    *dwarf.Entry
		order int32
	}
	var noRanges []pending
	next := l.topEntries()
	for nulls := 0; ; {
		cu, err := next()
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
		if x := l.index(p.cu, p.order, indexFull, nil); len(x.rows) > 0 || len(x.funcs) > 0 {
			l.rest = append(l.rest, x)
		}
	}
	return l, nil
}

// topEntries returns a function that gives the top entry of each unit
// in turn, nil at the end: read at each unit's start where l has the unit
// headers (dwarfInfo), else by moving debug/dwarf's reader past each
// top entry's children (unitSkipper; reading all units' top entries
// twice, once to find the last unit).
func (l *DWARFLines) topEntries() func() (*dwarf.Entry, error) {
	r := l.d.Reader()
	if x := l.info; x != nil {
		i := 0
		return func() (*dwarf.Entry, error) {
			for i < len(x.units) {
				u := &x.units[i]
				i++
				if u.data < u.end {
					r.Seek(dwarf.Offset(u.data))
					return r.Next()
				}
			}
			return nil, nil
		}
	}
	skip := newUnitSkipper(l.d)
	var last *dwarf.Entry
	return func() (*dwarf.Entry, error) {
		if last != nil {
			skip.skip(r, last)
		}
		e, err := r.Next()
		last = nil
		if err == nil && e != nil && e.Tag != 0 {
			last = e
		}
		return e, err
	}
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

// unit returns the index of units[i] that reads what (indexFull: all
// of it; indexOuter: its outer index; indexRows: its line table, the full
// or outer index when built), building it on first need, with the line
// rows of another of its indexes where one is built.
func (l *DWARFLines) unit(i int32, what int) *unitIndex {
	u := &l.units[i]
	p := &u.idx
	switch what {
	case indexOuter:
		p = &u.outer
	case indexRows:
		if x := u.idx.Load(); x != nil {
			return x
		}
		if x := u.outer.Load(); x != nil {
			return x
		}
		p = &u.rows
	}
	if x := p.Load(); x != nil {
		return x
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if x := p.Load(); x != nil {
		return x
	}
	var rows *unitIndex
	for _, q := range [...]*atomic.Pointer[unitIndex]{&u.idx, &u.outer, &u.rows} {
		if rows = q.Load(); rows != nil {
			break
		}
	}
	x := l.index(u.cu, u.order, what, rows)
	p.Store(x)
	return x
}
