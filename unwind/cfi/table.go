package cfi

import (
	"cmp"
	"slices"

	"github.com/macprof/macprof/unwind"
)

// DWARF register numbers of the registers a table's rules name.
const (
	regAMD64FP = 6  // rbp
	regAMD64SP = 7  // rsp
	regAMD64RA = 16 // the return address column
	regARM64FP = 29 // x29
	regARM64LR = 30 // x30
	regARM64SP = 31 // sp
)

// Table maps file offsets of an object's code to unwind rules. It is safe
// for concurrent use: read-only once built, except that a lazily indexed
// table compiles FDEs as lookups meet them (under its own lock).
type Table struct {
	arch unwind.Arch
	// FramePointers: the object keeps frame pointers in all its code (a Go
	// binary); a walker may follow them instead of the rows.
	framePointers bool
	base          uint64   // the file offset addrs are relative to
	addrs         []uint32 // row starts, ascending, relative to base
	rules         []uint16 // rules[i] is the palette index of row i
	palette       []unwind.Rule
	// pages[p] is the index of the first row starting at or after base +
	// p<<pageShift; pages has one more entry than there are pages.
	pages []uint32
	// lazy, when set, answers for the addresses its .eh_frame FDEs cover,
	// compiling each on first use; the rows above then hold only what
	// other sections (.debug_frame) add.
	lazy *ehIndex
}

const pageShift = 12

// Arch returns the architecture of the object.
func (t *Table) Arch() unwind.Arch { return t.arch }

// FramePointers reports whether the object is known to keep frame pointers
// everywhere (a Go binary), so that a walker may follow them.
func (t *Table) FramePointers() bool { return t.framePointers }

// Rows returns the number of rows built so far (a lazily indexed table's
// grows as lookups compile its FDEs).
func (t *Table) Rows() int {
	n := len(t.addrs)
	if t.lazy != nil {
		n += int(t.lazy.rows.Load())
	}
	return n
}

// Lazy reports whether the table compiles its .eh_frame FDEs on first use.
func (t *Table) Lazy() bool { return t.lazy != nil }

// CompileAll compiles every FDE a lazily indexed table has not compiled
// yet, so that no later lookup compiles one: for walks that hold threads
// stopped (a snapshot).
func (t *Table) CompileAll() {
	if t != nil && t.lazy != nil {
		t.lazy.compileAll()
	}
}

// Bytes returns the table's approximate size in memory.
func (t *Table) Bytes() int {
	n := 4*len(t.addrs) + 2*len(t.rules) + 20*len(t.palette) + 4*len(t.pages) + 96
	if t.lazy != nil {
		n += t.lazy.bytes()
	}
	return n
}

// Lookup returns the rule for the code at file offset off; ok is false
// where no FDE covers off. It does not allocate once the FDE is compiled.
func (t *Table) Lookup(off uint64) (r unwind.Rule, ok bool) {
	if p := t.Find(off); p != nil {
		return *p, true
	}
	return unwind.Rule{}, false
}

// Find returns the rule for the code at file offset off, nil where no FDE
// covers it. The rule must not be modified. It does not allocate once the
// FDE is compiled (a lazily indexed table compiles an FDE on the first
// lookup in it).
func (t *Table) Find(off uint64) *unwind.Rule {
	if t == nil {
		return nil
	}
	if t.lazy != nil {
		if r, ok := t.lazy.find(off); ok {
			return r
		}
	}
	return t.find(off)
}

// find is Find in the compiled rows.
func (t *Table) find(off uint64) *unwind.Rule {
	if t == nil || len(t.addrs) == 0 {
		return nil
	}
	if off < t.base {
		return nil
	}
	rel := off - t.base
	p := rel >> pageShift
	addrs := t.addrs
	if p+1 >= uint64(len(t.pages)) {
		// Past the last row, which is always a gap.
		return nil
	}
	r32 := uint32(rel)
	// The row for rel is the last one starting at or before it: among
	// rows [pages[p]-1, pages[p+1]).
	i, j := int(t.pages[p]), int(t.pages[p+1])
	if i > 0 {
		i--
	}
	if j > len(addrs) || i >= j {
		return nil // not reached: compile builds pages so
	}
	for i+1 < j {
		m := int(uint(i+j) >> 1)
		if addrs[m] <= r32 {
			i = m
		} else {
			j = m
		}
	}
	if addrs[i] > r32 {
		return nil
	}
	if r := &t.palette[t.rules[i]]; r.CFA != unwind.CFANone {
		return r
	}
	return nil
}

// Row is one row of a table, for tests and tools.
type Row struct {
	Off  uint64 // the first file offset the rule applies to
	Rule unwind.Rule
}

// AllRows returns every row, CFANone gaps included, in address order. A
// lazily indexed table compiles all its FDEs for it and merges them as a
// whole build would, so that where FDEs overlap (see the package's doc)
// its rows and its lookups may differ.
func (t *Table) AllRows() []Row {
	if t.lazy != nil {
		spans := t.lazy.spans()
		rows := (&Table{arch: t.arch, base: t.base, addrs: t.addrs, rules: t.rules, palette: t.palette, pages: t.pages}).AllRows()
		for i, r := range rows {
			if r.Rule.CFA != unwind.CFANone && i+1 < len(rows) {
				spans = append(spans, span{start: r.Off, end: rows[i+1].Off, rows: rows[i : i+1]})
			}
		}
		return compile(t.arch, spans).AllRows()
	}
	out := make([]Row, len(t.addrs))
	for i, a := range t.addrs {
		out[i] = Row{Off: t.base + uint64(a), Rule: t.palette[t.rules[i]]}
	}
	return out
}

// span is one FDE's rows, in file offsets: rows[i] applies from rows[i].Off
// to the next row's, the last to end.
type span struct {
	start, end uint64
	rows       []Row
}

// maxPalette bounds the distinct rules of a table (16-bit indexes); rows
// beyond it are marked unsupported.
const maxPalette = 1 << 16

// maxSpan bounds the code a table covers (32-bit offsets).
const maxSpan = 1 << 32

// sortSpans returns spans sorted by start, those with equal starts in
// their order. It sorts their indexes, not the spans (a stable sort moving
// 40-byte spans was a quarter of a table's build), and returns spans as
// they are when already in order.
func sortSpans(spans []span) []span {
	if slices.IsSortedFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) }) {
		return spans
	}
	order := make([]int32, len(spans))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(spans[a].start, spans[b].start); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	sorted := make([]span, len(spans))
	for i, j := range order {
		sorted[i] = spans[j]
	}
	return sorted
}

// compile sorts spans, drops those overlapping an earlier one, fills the
// gaps with CFANone rows, merges equal neighbours and builds the index.
func compile(arch unwind.Arch, spans []span) *Table {
	spans = sortSpans(spans)
	t := &Table{arch: arch}
	if len(spans) == 0 {
		return t
	}
	t.base = spans[0].start
	index := map[unwind.Rule]uint16{}
	ruleIndex := func(r unwind.Rule) uint16 {
		if i, ok := index[r]; ok {
			return i
		}
		if len(t.palette) >= maxPalette-1 {
			// The last slot is kept for the unsupported rule, which
			// every rule beyond the palette becomes.
			r = unwind.Rule{CFA: unwind.CFAUnsupported, RA: unwind.RegUnsupported, FP: unwind.RegUnsupported}
			if i, ok := index[r]; ok {
				return i
			}
		}
		i := uint16(len(t.palette))
		t.palette = append(t.palette, r)
		index[r] = i
		return i
	}
	none := unwind.Rule{}
	var lastRule unwind.Rule
	have := false
	end := t.base
	add := func(off uint64, r unwind.Rule) {
		if have && r == lastRule {
			return
		}
		rel := off - t.base
		if n := len(t.addrs); n > 0 && uint32(rel) == t.addrs[n-1] {
			// A zero-length row: the later one wins.
			t.rules[n-1] = ruleIndex(r)
			lastRule = r
			return
		}
		t.addrs = append(t.addrs, uint32(rel))
		t.rules = append(t.rules, ruleIndex(r))
		lastRule, have = r, true
	}
	for _, s := range spans {
		if s.start < end || s.end <= s.start || s.end-t.base > maxSpan-1 {
			continue // overlaps an earlier FDE, empty, or too far away
		}
		if s.start > end || len(s.rows) == 0 {
			// A gap, or an FDE without rows: the previous rule
			// must not run on over it.
			add(end, none)
		}
		for _, r := range s.rows {
			add(r.Off, r.Rule)
		}
		end = s.end
	}
	add(end, none)
	if !have {
		return &Table{arch: arch}
	}
	// The page index.
	last := uint64(t.addrs[len(t.addrs)-1])
	npages := int(last>>pageShift) + 1
	t.pages = make([]uint32, npages+1)
	i := 0
	for p := 0; p <= npages; p++ {
		for i < len(t.addrs) && uint64(t.addrs[i]) < uint64(p)<<pageShift {
			i++
		}
		t.pages[p] = uint32(i)
	}
	t.addrs = t.addrs[:len(t.addrs):len(t.addrs)]
	return t
}

// FromRows builds a table from rows already computed (in file offsets,
// ascending; the last applies up to end), for unwind information from
// other sources and for tests. Rows out of order are dropped.
func FromRows(arch unwind.Arch, rows []Row, end uint64) *Table {
	var sorted []Row
	for _, r := range rows {
		if n := len(sorted); (n == 0 || r.Off > sorted[n-1].Off) && r.Off < end {
			sorted = append(sorted, r)
		}
	}
	if len(sorted) == 0 {
		return &Table{arch: arch}
	}
	return compile(arch, []span{{start: sorted[0].Off, end: end, rows: sorted}})
}
