package symcache

import (
	"debug/elf"
	"fmt"
	"strings"

	"github.com/macprof/macprof/internal/objfile"
)

// A one-shot command (symbolize) builds the whole table of a large C++
// object (node: 190,000 function symbols) and then reads the names of
// the few it prints. elfTableMapped builds that Table with no Symbol
// (and no string header for the garbage collector to scan) per entry:
// 24-byte records sorted by one radix sort, the names left as offsets in
// the mapped string tables, read when looked up (Table.name).

// symRec is a function symbol as elfTableMapped keeps it.
type symRec struct {
	start, size uint64
	ref         uint32 // nameRef: which string table and offset
	pri         uint32 // rank among the symbols at its start (NewTable's)
}

// A nameRef locates a name in one of a table's two string tables: the
// table in its top bit, the offset (below objfile.MaxStringTable, 2^27)
// in the low bits. refDeferred marks instead the index of a list of
// names to choose among (Table.tieName). noName is an anonymous start.
const (
	refTable    = 1 << 31
	refDeferred = 1 << 30
	refOffset   = 1<<27 - 1
	noName      = 1<<32 - 1
)

// elfTableMapped is elfTableIn for a file with no Go pclntab whose
// symbol and string tables lie in m, f's mapping: it returns the same
// Table (names picked among symbols at one start as NewTable picks them),
// whose names are read from m when looked up.
func elfTableMapped(object string, f *elf.File, m *objfile.Mapping) (*Table, elfInfo, error) {
	var info elfInfo
	t := &Table{Object: object, segments: elfSegments(f)}
	// A stripped file (no .symtab) gets every function's start from
	// .eh_frame, as elfTableIn adds them; all is counted before recs
	// is made, which is not grown after.
	var starts []uint64
	if elfSymbolCount(f, elf.SHT_SYMTAB) <= 1 {
		var ok bool
		if starts, ok = ehFrameHdrStartsIn(f, m); !ok {
			starts, _ = ehFrameStarts(f, nil)
		}
	}
	secStarts := execSectionStarts(f)
	recs := make([]symRec, 0, elfSymbolCount(f, elf.SHT_SYMTAB)+elfSymbolCount(f, elf.SHT_DYNSYM)+len(secStarts)+len(starts))
	nsym := 0
	for k, typ := range [...]elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		strs, n, _, err := scanFuncSymbols(f, m, typ, false, func(name uint32, value, size uint64) {
			ref := uint32(noName)
			if name <= refOffset {
				ref = uint32(k)<<31 | name
			}
			recs = append(recs, symRec{start: value, size: size, ref: ref})
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
	info.named = len(recs)
	for i := range recs {
		r := &recs[i]
		if r.ref == noName {
			continue
		}
		// (An empty name, read only where it matters, in rankTies,
		// reads as none.)
		if off := r.ref &^ refTable; int(off) >= len(t.strs[r.ref>>31]) {
			r.ref = noName
		}
	}
	for _, a := range secStarts {
		recs = append(recs, symRec{start: a, ref: noName})
	}
	tail := len(recs)
	if nsym == 0 {
		for _, a := range starts {
			recs = append(recs, symRec{start: a, ref: noName})
		}
	}
	t.fromRecs(recs, tail)
	return t, info, nil
}

// fromRecs fills t's starts, ends and refs from recs (in the order of
// NewTable's syms), keeping one symbol per start as NewTable does.
// recs[tail:] are often in start order already (.eh_frame_hdr's starts).
func (t *Table) fromRecs(recs []symRec, tail int) {
	// In start order from here on: every later pass reads the records
	// in turn.
	recs = sortRecs(recs, tail)
	t.rankTies(recs)
	t.starts = make([]uint64, 0, len(recs))
	t.ends = make([]uint64, 0, len(recs))
	t.refs = make([]uint32, 0, len(recs))
	sized := false
	for i := 0; i < len(recs); {
		best := i
		j := i + 1
		for ; j < len(recs) && recs[j].start == recs[best].start; j++ {
			if recs[j].pri < recs[best].pri {
				best = j // in index order within a start: the first wins ties
			}
		}
		r := &recs[best]
		end := uint64(0)
		if r.size != 0 {
			end, sized = r.start+r.size, true
		}
		ref := r.ref
		if r.pri&priDeferred != 0 {
			ref = t.deferTie(recs[i:j])
		}
		t.starts = append(t.starts, r.start)
		t.ends = append(t.ends, end)
		t.refs = append(t.refs, ref)
		i = j
	}
	if !sized {
		t.ends = nil
	}
	t.buildBuckets()
}

// sortRecs returns recs sorted by start, then index: recs itself or a
// copy (recs then left as it was). When recs[tail:] is in start order
// already, only recs[:tail] is sorted, then merged with it in place:
// libLLVM's 95,000 .eh_frame starts after its 36,000 .dynsym functions.
func sortRecs(recs []symRec, tail int) []symRec {
	tail = min(max(tail, 0), len(recs))
	for i := tail + 1; i < len(recs); i++ {
		if recs[i].start < recs[i-1].start {
			tail = len(recs) // not in order: sorted with the rest
			break
		}
	}
	head := sortedRecs(recs[:tail])
	if tail == len(recs) {
		return head
	}
	// Merged into recs from its start: the record written at i+j is
	// never one of rest still to be read (at tail+j, tail >= i).
	i, j := 0, tail
	for i < len(head) && j < len(recs) {
		// At one start, head's records come first (lower indexes).
		if recs[j].start < head[i].start {
			recs[i+j-tail] = recs[j]
			j++
		} else {
			recs[i+j-tail] = head[i]
			i++
		}
	}
	copy(recs[i+j-tail:], head[i:]) // the rest of recs is in place
	return recs
}

// sortedRecs returns a copy of recs sorted by start, then index.
func sortedRecs(recs []symRec) []symRec {
	sorted := make([]symRec, len(recs))
	if len(recs) == 0 {
		return sorted
	}
	lo, hi := recs[0].start, recs[0].start
	for i := range recs {
		lo, hi = min(lo, recs[i].start), max(hi, recs[i].start)
	}
	// One word per record, start above and index below, when both fit:
	// the radix sort is then stable by construction.
	idxBits := uint(1)
	for len(recs) >= 1<<idxBits {
		idxBits++
	}
	span := hi - lo
	if idxBits < 64 && span>>(64-idxBits) == 0 {
		keys := make([]uint64, 2*len(recs))
		for i := range recs {
			keys[i] = (recs[i].start-lo)<<idxBits | uint64(i)
		}
		for i, k := range radixSort64(keys[:len(recs)], keys[len(recs):]) {
			sorted[i] = recs[k&(1<<idxBits-1)]
		}
		return sorted
	}
	keys := make([]symKey, len(recs))
	for i := range recs {
		keys[i] = symKey{start: recs[i].start, idx: uint32(i)}
	}
	sortKeys(keys)
	for i, k := range keys {
		sorted[i] = recs[k.idx]
	}
	return sorted
}

// The bits of symRec.pri above a name's length: NewTable's rank is
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

// rankTies sets pri of every record that shares its start with another,
// reading no more of the names than the choice needs. Where the named
// symbols of a start all have one size, the end is known whichever name
// wins, and the shortest is found when the function is looked up
// (deferTie): node's 40,000 .symtab/.dynsym pairs cost no read. A name
// is read here only where it can change the end: whether it is empty
// where an unnamed symbol could win instead, and its length where named
// symbols of different sizes share a start, in order of the names'
// offsets, so that each byte of a string table is scanned at most once
// however the names overlap.
func (t *Table) rankTies(recs []symRec) {
	const needLen = 1 << 31
	var read []uint64 // ref<<32 | needLen | index
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].start == recs[i].start {
			j++
		}
		if j-i == 1 {
			i = j
			continue
		}
		n, sameSize := 0, true
		var size uint64
		// The winner were every name empty: the first sized one,
		// else the first.
		anon := i
		for k := i; k < j; k++ {
			r := &recs[k]
			if r.size == 0 {
				r.pri |= priUnsized
			} else if recs[anon].size == 0 {
				anon = k
			}
			if r.ref == noName {
				r.pri |= priAnonymous
				continue
			}
			if n > 0 && r.size != size {
				sameSize = false
			}
			n, size = n+1, r.size
		}
		// Whether a named symbol's name is empty matters only where
		// the unnamed winner is not one of them (another end).
		checkEmpty := recs[anon].ref == noName
		for k := i; k < j; k++ {
			r := &recs[k]
			switch {
			case r.ref == noName:
			case n > 1 && (!sameSize || n > maxDeferred):
				read = append(read, uint64(r.ref)<<32|needLen|uint64(k))
			default:
				if n > 1 {
					r.pri |= priDeferred
				}
				if checkEmpty || (n == 1 && k != anon) {
					read = append(read, uint64(r.ref)<<32|uint64(k))
				}
			}
		}
		i = j
	}
	if len(read) == 0 {
		return
	}
	read = radixSort64(read, make([]uint64, len(read)))
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
			recs[k].pri = recs[k].pri&^priDeferred | priAnonymous
			continue
		}
		if uint32(v)&needLen == 0 {
			continue
		}
		if nul < i {
			nul = i + len(untilNUL(s[i:]))
		}
		recs[k].pri |= uint32(min(len(TrimGoABI(s[i:nul])), priLen))
	}
}

// deferTie returns the nameRef standing for the named symbols of group
// (one start's records, in the order of NewTable's syms) marked priDeferred (not found
// empty): refDeferred and the index of their list in t.tieAt, or the one
// symbol's own.
func (t *Table) deferTie(group []symRec) uint32 {
	if len(t.tieAt) == 0 {
		t.tieAt = append(t.tieAt, 0)
	}
	first := len(t.tieRefs)
	for k := range group {
		if r := &group[k]; r.pri&priDeferred != 0 {
			t.tieRefs = append(t.tieRefs, r.ref)
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

// tieName returns NewTable's choice among the names of tie list i: the
// shortest (after TrimGoABI) that is not empty, the first of equals, or
// "" when all are empty. Each name is searched for its end in windows
// that double, and, once the shortest is known, only a few bytes past
// it: a lookup reads no more than a few times the name it returns.
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
	for window := 64; left > 0; window *= 2 {
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

// radixSort64 sorts v (least significant digit of 11 bits first,
// skipping digits that are the same in every value), using tmp (as long
// as v) as the other buffer; it returns the sorted slice, v or tmp.
func radixSort64(v, tmp []uint64) []uint64 {
	if len(v) == 0 {
		return v
	}
	const digit = 11
	var diff uint64
	for _, x := range v {
		diff |= x ^ v[0]
	}
	var count [1 << digit]int
	for shift := uint(0); shift < 64 && diff>>shift != 0; shift += digit {
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
