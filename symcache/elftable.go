package symcache

import (
	"debug/elf"
	"fmt"
	"slices"
	"strings"

	"github.com/macprof/macprof/internal/objfile"
)

// A one-shot command (symbolize) builds the whole table of a large C++
// object (node: 190,000 function symbols) and then reads the names of
// the few it prints. elfTableMapped builds that Table with no Symbol
// (and no string header for the garbage collector to scan) per entry:
// each symbol's start, size and name as 8-byte keys and columns, put in
// order by one radix sort of the keys, the names left as offsets in the
// mapped string tables, read when looked up (Table.name). Every fresh
// page a one-shot command touches is one the kernel clears: the sort's
// buffers become the table's starts and ends where they can.

// A nameRef locates a name in one of a table's two string tables: the
// table in its top bit, the offset (below objfile.MaxStringTable, 2^27)
// in the low bits. refDeferred marks instead the index of a list of
// names to choose among (Table.tieName). refMachO marks the offset of a
// Mach-O symbol's entry in the table's first string table, not yet read:
// machONameRef gives the nameRef of the name a table keeps from it (past
// the leading '_', none for "" or "<redacted>"). noName is an anonymous
// start.
const (
	refTable    = 1 << 31
	refDeferred = 1 << 30
	refMachO    = 1 << 29
	refOffset   = 1<<27 - 1
	noName      = 1<<32 - 1
)

// symCols are a table's function symbols, one column per field, in the
// order of NewTable's syms until sorted, then by start.
type symCols struct {
	// starts hold each symbol's start; its capacity is at least twice
	// its length, for the sort's other buffer.
	starts []uint64
	sizes  []uint64
	refs   []uint32 // nameRef
	// pri is each symbol's rank among those at its start (NewTable's),
	// or nil while no start has two; made in priBuf once sorted.
	pri, priBuf []uint32
}

func (c *symCols) add(start, size uint64, ref uint32) {
	c.starts = append(c.starts, start)
	c.sizes = append(c.sizes, size)
	c.refs = append(c.refs, ref)
}

// elfTableMapped is elfTableIn for a file with no Go pclntab whose
// symbol and string tables lie in m, f's mapping: it returns the same
// Table (names picked among symbols at one start as NewTable picks them),
// whose names are read from m when looked up.
func elfTableMapped(object string, f *elf.File, m *objfile.Mapping) (*Table, elfInfo, error) {
	var info elfInfo
	t := &Table{Object: object, segments: elfSegments(f)}
	// A stripped file (no .symtab) gets every function's start from
	// .eh_frame, as elfTableIn adds them; all is counted before the
	// columns are made, which are not grown after.
	var starts []uint64
	if elfSymbolCount(f, elf.SHT_SYMTAB) <= 1 {
		var ok bool
		if starts, ok = ehFrameHdrStartsIn(f, m); !ok {
			starts, _ = ehFrameStarts(f, nil)
		}
	}
	secStarts := execSectionStarts(f)
	n := elfSymbolCount(f, elf.SHT_SYMTAB) + elfSymbolCount(f, elf.SHT_DYNSYM) + len(secStarts)
	c := symCols{starts: make([]uint64, 0, 2*n), sizes: make([]uint64, 0, n), refs: make([]uint32, 0, n)}
	nsym := 0
	for k, typ := range [...]elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		strs, n, _, err := scanFuncSymbols(f, m, typ, false, func(name uint32, value, size uint64) {
			ref := uint32(noName)
			if name <= refOffset {
				ref = uint32(k)<<31 | name
			}
			c.add(value, size, ref)
		})
		if err != nil {
			return nil, info, fmt.Errorf("symcache: %s: %s: %w", object, [...]string{".symtab", ".dynsym"}[k], err)
		}
		if typ == elf.SHT_SYMTAB {
			nsym = n
		}
		// Names past the last NUL have none (as nameSymbols reads
		// them): Table.name then never scans past it.
		t.strs[k] = strs[:strings.LastIndexByte(strs, 0)+1]
	}
	info.dwarf = f.Section(".debug_info") != nil || f.Section(".zdebug_info") != nil
	info.named = len(c.refs)
	for i, ref := range c.refs {
		// (An empty name, read only where it matters, in rankTies,
		// reads as none.)
		if ref != noName && int(ref&^refTable) >= len(t.strs[ref>>31]) {
			c.refs[i] = noName
		}
	}
	for _, a := range secStarts {
		c.add(a, 0, noName)
	}
	if nsym != 0 {
		starts = nil
	}
	t.fromCols(&c, starts)
	return t, info, nil
}

// fromCols fills t's starts, ends and refs from c, then anonymous starts
// after c's symbols, keeping one symbol per start as NewTable does. anon
// (.eh_frame's starts, a Mach-O file's function starts: usually in order
// already) may be sorted in place; the runs of it between symbols are
// copied whole, as NewTableWithStarts copies them (biome: 80,000 function
// starts among a few hundred symbols). ends are made only where a symbol
// has a size (a Mach-O file's have none).
func (t *Table) fromCols(c *symCols, anon []uint64) {
	c.sort()
	if groups, tied := t.rankTies(c); groups > 0 {
		t.tieAt = make([]uint32, 1, groups+1)
		t.tieRefs = make([]uint32, 0, tied)
	}
	if !strictlyAscending(anon) {
		anon = slices.Compact(slices.Sorted(slices.Values(anon)))
	}
	sized := slices.ContainsFunc(c.sizes, func(size uint64) bool { return size != 0 })
	nsym := len(c.refs)
	if len(anon) == 0 {
		// In place: each function is written at or before the first
		// of its symbols, from which it is read.
		t.starts, t.refs = c.starts[:0], c.refs[:0]
		if sized {
			t.ends = c.sizes[:0]
		}
	} else {
		n := nsym + len(anon)
		t.starts, t.refs = make([]uint64, 0, n), make([]uint32, 0, n)
		if sized {
			t.ends = make([]uint64, 0, n)
		}
	}
	a := 0
	for i := 0; i < nsym; {
		start := c.starts[i]
		if a < len(anon) && anon[a] <= start {
			// Anonymous starts alone, up to this symbol's: a
			// symbol at its start wins (named, sized, or first).
			p := a + gallop(anon[a:], start)
			t.addAnon(anon[a:p])
			if a = p; a < len(anon) && anon[a] == start {
				a++
			}
		}
		best := i
		j := i + 1
		for ; j < nsym && c.starts[j] == start; j++ {
			if c.pri[j] < c.pri[best] {
				best = j // in index order within a start: the first wins ties
			}
		}
		ref := c.refs[best]
		if c.pri != nil && c.pri[best]&priDeferred != 0 {
			ref = t.deferTie(c, i, j)
		}
		if sized {
			end := uint64(0)
			if size := c.sizes[best]; size != 0 {
				end = start + size
			}
			t.ends = append(t.ends, end)
		}
		t.starts = append(t.starts, start)
		t.refs = append(t.refs, ref)
		i = j
	}
	t.addAnon(anon[a:])
	if sized && !slices.ContainsFunc(t.ends, func(e uint64) bool { return e != 0 }) {
		t.ends = nil // the sized symbols all lost to others at their starts
	}
	t.buildBuckets()
}

// addAnon appends anonymous functions at starts (ascending, each past
// t's last) to t, made by fromCols.
func (t *Table) addAnon(starts []uint64) {
	t.starts = append(t.starts, starts...)
	for range starts {
		t.refs = append(t.refs, noName)
	}
	if t.ends != nil {
		t.ends = append(t.ends, make([]uint64, len(starts))...)
	}
}

// sort puts c's symbols in order of start, then index: a radix sort of
// one word per symbol (start above, index below) when both fit, then
// each column gathered in that order (loads that overlap, where a
// permutation in place follows one chain of misses), into the sort's
// other buffer for the sizes.
func (c *symCols) sort() {
	n := len(c.starts)
	if n == 0 {
		return
	}
	lo, hi := c.starts[0], c.starts[0]
	for _, a := range c.starts {
		lo, hi = min(lo, a), max(hi, a)
	}
	shift := uint(1)
	for n >= 1<<shift {
		shift++
	}
	keys, spare := c.starts, c.starts[n:2*n]
	refs := make([]uint32, n)
	if span := hi - lo; shift >= 64 || span>>(64-shift) != 0 {
		// Starts too far apart to share a word with the index.
		sk := make([]symKey, n)
		for i, a := range keys {
			sk[i] = symKey{start: a, idx: uint32(i)}
		}
		sortKeys(sk)
		for k, key := range sk {
			spare[k], refs[k], keys[k] = c.sizes[key.idx], c.refs[key.idx], key.start
		}
		c.sizes, c.refs, c.priBuf = spare, refs, c.refs
		return
	}
	for i, a := range keys {
		keys[i] = (a-lo)<<shift | uint64(i)
	}
	// The radix sort is stable by construction, and the index below
	// each start is in order already: only the starts' digits are
	// sorted by (node: 3 passes, not 5).
	sizes := spare
	if sorted := radixSort64(keys, spare, shift); &sorted[0] != &keys[0] {
		keys, sizes = spare, keys
	}
	mask := uint64(1)<<shift - 1
	for k, key := range keys {
		i := key & mask
		sizes[k], refs[k] = c.sizes[i], c.refs[i]
		keys[k] = lo + key>>shift
	}
	// The names in the symbols' first order are read no more: their
	// column holds the ranks.
	c.starts, c.sizes, c.refs, c.priBuf = keys, sizes, refs, c.refs
}

// The bits of symCols.pri above a name's length: NewTable's rank is
// (named, sized, shortest name, first), lower first. priDeferred marks
// the named symbols of a start whose choice among them is left to
// Table.name (deferTie).
const (
	priAnonymous = 1 << 31
	priUnsized   = 1 << 30
	priDeferred  = 1 << 29
	priLen       = 1<<29 - 1
)

// maxDeferred bounds the named symbols at one start whose choice is
// left to Table.name: each lookup of the function reads their names.
const maxDeferred = 8

// rankTies sets pri of every symbol that shares its start with another,
// reading no more of the names than the choice needs. Where the named
// symbols of a start all have one size, the end is known whichever name
// wins, and the shortest is found when the function is looked up
// (deferTie): node's 40,000 .symtab/.dynsym pairs cost no read. A name
// is read here only where it can change the end: whether it is empty
// where an unnamed symbol could win instead, and its length where named
// symbols of different sizes share a start, in order of the names'
// offsets, so that each byte of a string table is scanned at most once
// however the names overlap. c is sorted. It returns how many starts and
// symbols it left to deferTie at most, for room made once.
func (t *Table) rankTies(c *symCols) (groups, tied int) {
	const needLen = 1 << 31
	var read []uint64 // ref<<32 | needLen | index
	n := len(c.starts)
	for i := 0; i < n; {
		j := i + 1
		for j < n && c.starts[j] == c.starts[i] {
			j++
		}
		if j-i == 1 {
			i = j
			continue
		}
		if c.pri == nil {
			c.pri = c.priBuf[:n]
			clear(c.pri)
		}
		for k := i; k < j; k++ {
			if ref := c.refs[k]; ref != noName && ref&refMachO != 0 {
				c.refs[k] = machONameRef(t.strs[0], ref&refOffset)
			}
		}
		named, sameSize := 0, true
		var size uint64
		// The winner were every name empty: the first sized one,
		// else the first.
		anon := i
		for k := i; k < j; k++ {
			if c.sizes[k] == 0 {
				c.pri[k] |= priUnsized
			} else if c.sizes[anon] == 0 {
				anon = k
			}
			if c.refs[k] == noName {
				c.pri[k] |= priAnonymous
				continue
			}
			if named > 0 && c.sizes[k] != size {
				sameSize = false
			}
			named, size = named+1, c.sizes[k]
		}
		if named > 1 && sameSize && named <= maxDeferred {
			groups++
		}
		// Whether a named symbol's name is empty matters only where
		// the unnamed winner is not one of them (another end).
		checkEmpty := c.refs[anon] == noName
		for k := i; k < j; k++ {
			ref := c.refs[k]
			switch {
			case ref == noName:
			case named > 1 && (!sameSize || named > maxDeferred):
				read = append(read, uint64(ref)<<32|needLen|uint64(k))
			default:
				if named > 1 {
					c.pri[k] |= priDeferred
					tied++
				}
				if checkEmpty || (named == 1 && k != anon) {
					read = append(read, uint64(ref)<<32|uint64(k))
				}
			}
		}
		i = j
	}
	if len(read) == 0 {
		return groups, tied
	}
	read = radixSort64(read, make([]uint64, len(read)), 0)
	nul, table := -1, -1
	for _, v := range read {
		ref, k := uint32(v>>32), uint32(v)&^needLen
		s := t.strs[ref>>31]
		if int(ref>>31) != table {
			nul, table = -1, int(ref>>31)
		}
		i := int(ref &^ refTable)
		if s[i] == 0 {
			// An empty name is none: ranked as the unnamed are.
			c.pri[k] = c.pri[k]&^priDeferred | priAnonymous
			continue
		}
		if uint32(v)&needLen == 0 {
			continue
		}
		if nul < i {
			nul = i + len(untilNUL(s[i:]))
		}
		c.pri[k] |= uint32(min(len(TrimGoABI(s[i:nul])), priLen))
	}
	return groups, tied
}

// deferTie returns the nameRef standing for the named symbols of one
// start (c's symbols i to j, in the order of NewTable's syms) marked
// priDeferred (not found empty): refDeferred and the index of their list
// in t.tieAt, or the one symbol's own.
func (t *Table) deferTie(c *symCols, i, j int) uint32 {
	if len(t.tieAt) == 0 {
		t.tieAt = append(t.tieAt, 0)
	}
	first := len(t.tieRefs)
	for k := i; k < j; k++ {
		if c.pri[k]&priDeferred != 0 {
			t.tieRefs = append(t.tieRefs, c.refs[k])
		}
	}
	if len(t.tieRefs)-first == 1 {
		ref := t.tieRefs[first] // the others were empty
		t.tieRefs = t.tieRefs[:first]
		return ref
	}
	t.tieAt = append(t.tieAt, uint32(len(t.tieRefs)))
	return refDeferred | uint32(len(t.tieAt)-2)
}

// firstTieWindow is how many bytes of each name tieName searches for its
// end at first: most names end within it (node's C++ names: 72 bytes on
// average), each then found by one search.
const firstTieWindow = 256

// tieName returns NewTable's choice among the names of tie list i: the
// shortest (after TrimGoABI) that is not empty, the first of equals, or
// "" when all are empty. Each name is searched for its end in windows
// that double from firstTieWindow, and, once the shortest is known, only
// a few bytes past it: a lookup reads no more than a few times the name
// it returns, or firstTieWindow bytes of each name.
func (t *Table) tieName(i uint32) string {
	refs := t.tieRefs[t.tieAt[i]:t.tieAt[i+1]]
	var raw [maxDeferred]int     // length of each name, -1 until found
	var scanned [maxDeferred]int // bytes of each known to hold no NUL
	for c := range refs {
		raw[c] = -1
	}
	// A name longer than the shortest by more than a Go ABI suffix
	// cannot be shorter once trimmed.
	const slack = len(".abiinternal")
	shortest, left := -1, len(refs)
	for window := firstTieWindow; left > 0; window *= 2 {
		if shortest >= 0 {
			window = shortest + slack + 1 // the last pass
		}
		for c, ref := range refs {
			if raw[c] >= 0 {
				continue
			}
			// The table ended in a NUL when it was mapped; its file
			// may have been rewritten since, and its end then ends
			// the name.
			s := t.strs[ref>>31][int(ref&refOffset):]
			end := min(window, len(s))
			if scanned[c] >= end {
				continue
			}
			if j := strings.IndexByte(s[scanned[c]:end], 0); j >= 0 || end == len(s) {
				raw[c], left = end, left-1
				if j >= 0 {
					raw[c] = scanned[c] + j
				}
				if raw[c] > 0 && (shortest < 0 || raw[c] < shortest) {
					shortest = raw[c]
				}
			} else {
				scanned[c] = end
			}
		}
		if shortest >= 0 && window == shortest+slack+1 {
			break
		}
	}
	best, bestLen := "", 0
	for c, ref := range refs {
		if raw[c] <= 0 {
			continue
		}
		off := int(ref & refOffset)
		name := TrimGoABI(t.strs[ref>>31][off : off+raw[c]])
		if best == "" || len(name) < bestLen {
			best, bestLen = name, len(name)
		}
	}
	return best
}

// name returns the name of function i: from names, or read from its
// string table through refs.
func (t *Table) name(i int) string {
	if t.refs == nil {
		return t.names[i]
	}
	ref := t.refs[i]
	switch {
	case ref == noName:
		return ""
	case ref&refDeferred != 0:
		return t.tieName(ref &^ refDeferred)
	case ref&refMachO != 0:
		if ref = machONameRef(t.strs[0], ref&refOffset); ref == noName {
			return ""
		}
	}
	return TrimGoABI(untilNUL(t.strs[ref>>31][int(ref&refOffset):]))
}

// untilNUL returns s up to its first NUL, or all of s if it holds none: a
// string table read in place ended in a NUL when it was mapped, but its
// file may have been rewritten since.
func untilNUL(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// radixSort64 sorts v by its bits from the bit from up, keeping the order
// of values equal in those (least significant digit of 11 bits first,
// skipping digits that are the same in every value), using tmp (as long
// as v) as the other buffer; it returns the sorted slice, v or tmp. With
// from 0 it sorts v; values whose bits below from are already in order
// where the bits above are equal (an index below a key) need only the
// passes of the bits above.
func radixSort64(v, tmp []uint64, from uint) []uint64 {
	if len(v) == 0 {
		return v
	}
	const digit = 11
	var diff uint64
	for _, x := range v {
		diff |= x ^ v[0]
	}
	var count [1 << digit]int
	for shift := from; shift < 64 && diff>>shift != 0; shift += digit {
		if diff>>shift&(1<<digit-1) == 0 {
			continue
		}
		clear(count[:])
		for _, x := range v {
			count[x>>shift&(1<<digit-1)]++
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, x := range v {
			b := x >> shift & (1<<digit - 1)
			tmp[count[b]] = x
			count[b]++
		}
		v, tmp = tmp, v
	}
	return v
}
