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
// table in its top bit, the offset below. noName is an anonymous start.
const (
	refTable = 1 << 31
	noName   = 1<<32 - 1
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
	recs := make([]symRec, 0, elfSymbolCount(f, elf.SHT_SYMTAB)+elfSymbolCount(f, elf.SHT_DYNSYM)+len(starts))
	nsym := 0
	for k, typ := range [...]elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
		strs, n, _, err := scanFuncSymbols(f, m, typ, false, func(name uint32, value, size uint64) {
			ref := uint32(noName)
			if name < refTable {
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
	if nsym == 0 {
		for _, a := range starts {
			recs = append(recs, symRec{start: a, ref: noName})
		}
	}
	t.fromRecs(recs)
	return t, info, nil
}

// fromRecs fills t's starts, ends and refs from recs (in the order of
// NewTable's syms), keeping one symbol per start as NewTable does.
func (t *Table) fromRecs(recs []symRec) {
	order, scratch := sortRecs(recs)
	t.rankTies(recs, order, scratch)
	t.starts = make([]uint64, 0, len(recs))
	t.ends = make([]uint64, 0, len(recs))
	t.refs = make([]uint32, 0, len(recs))
	sized := false
	for i := 0; i < len(order); {
		best := order[i]
		j := i + 1
		for ; j < len(order) && recs[order[j]].start == recs[best].start; j++ {
			if recs[order[j]].pri < recs[best].pri {
				best = order[j] // order is by index within a start: the first wins ties
			}
		}
		r := &recs[best]
		end := uint64(0)
		if r.size != 0 {
			end, sized = r.start+r.size, true
		}
		t.starts = append(t.starts, r.start)
		t.ends = append(t.ends, end)
		t.refs = append(t.refs, r.ref)
		i = j
	}
	if !sized {
		t.ends = nil
	}
	t.buildBuckets()
}

// sortRecs returns the indexes of recs sorted by start, then index, and
// a buffer of len(recs) words for the caller to reuse.
func sortRecs(recs []symRec) (order []uint32, scratch []uint64) {
	order = make([]uint32, len(recs))
	scratch = make([]uint64, len(recs))
	if len(recs) == 0 {
		return order, scratch
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
		keys := make([]uint64, len(recs))
		for i := range recs {
			keys[i] = (recs[i].start-lo)<<idxBits | uint64(i)
		}
		sorted := radixSort64(keys, scratch)
		for i, k := range sorted {
			order[i] = uint32(k & (1<<idxBits - 1))
		}
		return order, keys
	}
	keys := make([]symKey, len(recs))
	for i := range recs {
		keys[i] = symKey{start: recs[i].start, idx: uint32(i)}
	}
	sortKeys(keys)
	for i, k := range keys {
		order[i] = k.idx
	}
	return order, scratch
}

// rankTies sets pri, NewTable's rank (named, then sized, then the
// shortest name), of every record that shares its start with another.
// A name is read only there, and its length only where two named
// symbols share a start, in order of the names' offsets, so that each
// byte of a string table is scanned at most once however the names
// overlap.
func (t *Table) rankTies(recs []symRec, order []uint32, scratch []uint64) {
	const needLen = 1 << 31
	ties := 0
	for i := 0; i < len(order); {
		j := i + 1
		for j < len(order) && recs[order[j]].start == recs[order[i]].start {
			j++
		}
		if j-i > 1 {
			for _, k := range order[i:j] {
				if recs[k].ref != noName {
					ties++
				}
			}
		}
		i = j
	}
	named := make([]uint64, 0, ties) // ref<<32 | needLen | index
	for i := 0; i < len(order); {
		j, n := i+1, 0
		for j < len(order) && recs[order[j]].start == recs[order[i]].start {
			j++
		}
		if j-i == 1 {
			i = j
			continue
		}
		for _, k := range order[i:j] {
			if recs[k].ref != noName {
				n++
			}
		}
		for _, k := range order[i:j] {
			r := &recs[k]
			if r.size == 0 {
				r.pri |= 1 << 30
			}
			switch {
			case r.ref == noName:
				r.pri |= 1 << 31
			case n > 1:
				named = append(named, uint64(r.ref)<<32|needLen|uint64(k))
			default:
				named = append(named, uint64(r.ref)<<32|uint64(k))
			}
		}
		i = j
	}
	if len(named) == 0 {
		return
	}
	named = radixSort64(named, scratch[:len(named)])
	nul, table := -1, -1
	for _, v := range named {
		ref, k := uint32(v>>32), uint32(v)&^needLen
		s := t.strs[ref>>31]
		if int(ref>>31) != table {
			nul, table = -1, int(ref>>31)
		}
		i := int(ref &^ refTable)
		if s[i] == 0 {
			recs[k].pri |= 1 << 31 // an empty name is none
			continue
		}
		if uint32(v)&needLen == 0 {
			continue // the only named one at its start
		}
		if nul < i {
			nul = i + strings.IndexByte(s[i:], 0) // s ends in a NUL
		}
		n := len(TrimGoABI(s[i:nul]))
		recs[k].pri |= uint32(min(n, 1<<30-1))
	}
}

// name returns the name of function i: from names, or read from its
// string table through refs.
func (t *Table) name(i int) string {
	if t.refs == nil {
		return t.names[i]
	}
	ref := t.refs[i]
	if ref == noName {
		return ""
	}
	s := t.strs[ref>>31]
	off := int(ref &^ refTable)
	return TrimGoABI(s[off : off+strings.IndexByte(s[off:], 0)])
}

// radixSort64 sorts v (least significant byte first, skipping bytes that
// are the same in every value), using tmp (as long as v) as the other
// buffer; it returns the sorted slice, v or tmp.
func radixSort64(v, tmp []uint64) []uint64 {
	if len(v) == 0 {
		return v
	}
	var diff uint64
	for _, x := range v {
		diff |= x ^ v[0]
	}
	for shift := uint(0); shift < 64 && diff>>shift != 0; shift += 8 {
		if diff>>shift&0xff == 0 {
			continue
		}
		var count [256]int
		for _, x := range v {
			count[x>>shift&0xff]++
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, x := range v {
			b := x >> shift & 0xff
			tmp[count[b]] = x
			count[b]++
		}
		v, tmp = tmp, v
	}
	return v
}
