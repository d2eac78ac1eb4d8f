package symcache

import (
	"slices"
	"sort"
)

// covering appends to out the indexes of the units whose ranges cover
// addr, building them on first need. When none does, it appends the line
// table alone (rowsOnly) of the unit whose range starts nearest before
// addr: a line sequence can end past its unit's high_pc (the padding after
// the unit's last function), and the index of all units at once gave
// those bytes a line. Its subprograms, which lie in its ranges, are not
// read: an object with DWARF for a few units (node: 1% of its code) reads
// one unit's tree per address past them otherwise.
//
// what is the index of the covering units to read (see unit).
func (l *DWARFLines) covering(addr uint64, out []*unitIndex, what int) (units []*unitIndex, rowsOnly bool) {
	last := l.lastSpan(addr)
	var seen [maxCoveringUnits]int32
	n := 0
	for i, k := last, 0; i >= 0 && k < maxSpanScan && n < len(seen) && l.maxHi[i] > addr; i, k = i-1, k+1 {
		s := &l.spans[i]
		if addr >= s.hi || slices.Contains(seen[:n], s.unit) {
			continue
		}
		seen[n] = s.unit
		n++
		out = append(out, l.unit(s.unit, what))
	}
	if n == 0 && last >= 0 {
		return append(out, l.unit(l.spans[last].unit, indexRows)), true
	}
	return out, false
}

// lastSpan returns the index of the last span starting at or before
// addr, or -1. Callers that look addresses up in order (symbolize) ask
// for the span of the last lookup again and again: it is checked before
// a search.
func (l *DWARFLines) lastSpan(addr uint64) int {
	n := len(l.spans)
	if h := int(l.spanHint.Load()); h < n && l.spans[h].lo <= addr && (h+1 == n || l.spans[h+1].lo > addr) {
		return h
	}
	i := sort.Search(n, func(i int) bool { return l.spans[i].lo > addr }) - 1
	if i >= 0 {
		l.spanHint.Store(int32(i))
	}
	return i
}

// row returns the last row of x at or before addr, or nil.
func (x *unitIndex) row(addr uint64) *lineRow {
	n := len(x.rows)
	if h := int(x.rowHint.Load()); h < n && x.rows[h].addr <= addr && (h+1 == n || x.rows[h+1].addr > addr) {
		return &x.rows[h]
	}
	i := sort.Search(n, func(i int) bool { return x.rows[i].addr > addr }) - 1
	if i < 0 {
		return nil
	}
	x.rowHint.Store(int32(i))
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

// locate finds the subprogram holding addr (nil when none) and addr's
// line. Of several units, the row nearest before addr gives the line (a
// tie going to a row that is not an end_sequence, then to the later unit,
// as in one table of all units sorted stably) and the subprogram starting
// nearest before addr the frames (a tie going to the later unit, as
// between aliases of one unit). what is the index of units to read: fn's
// node has its inlined subroutines (indexFull) or not (indexOuter).
func (l *DWARFLines) locate(addr uint64, what int) (fn *funcRange, fnUnit *unitIndex, file string, line int, hasLine bool) {
	var buf [maxCoveringUnits + 4]*unitIndex
	units := buf[:0]
	if len(l.rest) > 0 { // append's copy is a call even of nothing
		units = append(units, l.rest...)
	}
	units, rowsOnly := l.covering(addr, units, what)
	var row *lineRow
	var rowUnit *unitIndex
	for k, x := range units {
		if r := x.row(addr); r != nil && (row == nil || r.addr > row.addr ||
			r.addr == row.addr && (row.isEnd() && !r.isEnd() || row.isEnd() == r.isEnd() && x.order > rowUnit.order)) {
			row, rowUnit = r, x
		}
		if rowsOnly && k == len(units)-1 {
			break // a unit's subprograms lie in its ranges
		}
		if f := x.fn(addr); f != nil && (fn == nil || f.lo > fn.lo || f.lo == fn.lo && x.order > fnUnit.order) {
			fn, fnUnit = f, x
		}
	}
	hasLine = row != nil && row.file >= 0 // not an end row
	if hasLine {
		file, line = rowUnit.files[row.file], int(row.line)
	}
	return fn, fnUnit, file, line, hasLine
}

// Lines implements LineSource: the frames at addr, innermost first; every
// frame but the last is inlined into the one after it.
func (l *DWARFLines) Lines(addr uint64) []Frame {
	fn, fnUnit, file, line, hasLine := l.locate(addr, indexFull)
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
