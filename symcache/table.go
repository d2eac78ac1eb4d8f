// Package symcache turns addresses inside loaded images into function names
// and, where debug information has them, file:line and inlined frames. It
// loads one Table per object file lazily, keyed by build ID, so that
// processes sharing a library share its table.
package symcache

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
)

// Symbol is one function symbol in link-time addresses. Size zero means the
// size is unknown: the symbol extends to the next one.
type Symbol struct {
	Name  string
	Start uint64
	Size  uint64
}

// Segment maps a range of file offsets to link-time virtual addresses.
type Segment struct {
	Offset, Addr, Size uint64
}

// LineSource resolves a link-time address to source frames, innermost
// (possibly inlined) first. Implementations must be safe for concurrent use.
type LineSource interface {
	Lines(addr uint64) []Frame
}

// Table is the immutable symbol table of one object file: function starts
// sorted once, looked up by binary search.
type Table struct {
	starts []uint64
	ends   []uint64 // 0 when unknown; nil when no symbol has a size
	names  []string
	// refs, when not nil, stand for names: each function's name in
	// strs (see elfTableMapped).
	refs []uint32
	strs [2]string
	// tieRefs[tieAt[i]:tieAt[i+1]] are the names a ref with
	// refDeferred chooses among (see rankTies).
	tieRefs []uint32
	tieAt   []uint32
	// buckets index starts by address; see buildBuckets.
	buckets     []uint32
	bucketBase  uint64
	bucketShift uint
	segments    []Segment
	lines       LineSource
	// Object is the object's file name, for frames.
	Object string
}

// NewTable sorts syms and builds a Table. Symbols with empty names are
// kept as anonymous function starts (from LC_FUNCTION_STARTS, say): lookups
// that land in them report no name. Among several symbols at one address,
// the table keeps a named one over an anonymous one, a sized one over an
// unsized one, then the shortest name, then the first in syms. segs maps file offsets to
// addresses; an empty segs means file offsets are addresses. syms is not
// modified.
func NewTable(object string, syms []Symbol, segs []Segment, lines LineSource) *Table {
	return NewTableWithStarts(object, syms, nil, segs, lines)
}

// NewTableWithStarts is NewTable of syms and of an anonymous symbol (no
// name, no size) at each of starts, which a Mach-O file's function starts
// give by the hundred thousand, in ascending order: they are merged into
// the sorted symbols rather than sorted with them, and cost the table 24
// bytes each rather than the 80 of a Symbol, its sort key and copies
// (each 2 MiB of fresh heap `macprof symbolize` touches is a huge page the
// kernel clears). starts that do not strictly ascend are sorted (and
// their repeats dropped) first.
func NewTableWithStarts(object string, syms []Symbol, starts []uint64, segs []Segment, lines LineSource) *Table {
	if !strictlyAscending(starts) {
		starts = slices.Compact(slices.Sorted(slices.Values(starts)))
	}
	// Sort small pointer-free keys rather than the symbols themselves:
	// no write barriers, no reflection.
	keys := make([]symKey, len(syms))
	sized := false
	for i := range syms {
		s := &syms[i]
		pri := uint32(min(len(s.Name), 1<<30-1))
		if s.Name == "" {
			pri |= 1 << 31
		}
		if s.Size == 0 {
			pri |= 1 << 30
		} else {
			sized = true
		}
		keys[i] = symKey{start: s.Start, pri: pri, idx: uint32(i)}
	}
	sortKeys(keys)
	t := &Table{Object: object, segments: segs, lines: lines}
	// Two passes of one merge: the first counts the distinct starts, so
	// that the second fills arrays of that length (each is cleared as
	// it is allocated, so room to spare costs as much as what is used).
	// Each symbol's start is found among starts by a galloping search
	// from the last one's, and the starts between are copied whole: a
	// stripped image's 80,000 starts among a few hundred symbols
	// (biome) cost a copy, not a step of the merge each.
	n := countStarts(keys, starts)
	t.starts = make([]uint64, n)
	t.names = make([]string, n)
	if sized {
		t.ends = make([]uint64, n)
	}
	k, j := 0, 0
	for i := 0; i < len(keys); {
		// The first key at a start is the symbol kept there.
		s := &syms[keys[i].idx]
		at := s.Start
		for i < len(keys) && keys[i].start == at {
			i++
		}
		p := j + gallop(starts[j:], at)
		k += copy(t.starts[k:], starts[j:p])
		j = p
		t.starts[k], t.names[k] = at, s.Name
		if sized && s.Size != 0 {
			t.ends[k] = at + s.Size
		}
		k++
		if j < len(starts) && starts[j] == at {
			j++
		}
	}
	copy(t.starts[k:], starts[j:])
	if sized && !slices.ContainsFunc(t.ends, func(e uint64) bool { return e != 0 }) {
		t.ends = nil // the sized symbols all lost to others at their starts
	}
	t.buildBuckets()
	return t
}

// strictlyAscending reports whether each of s is greater than the one
// before (decoded function starts are).
func strictlyAscending(s []uint64) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return true
}

// countStarts returns the number of distinct starts among those of keys
// (sorted by sortKeys) and starts (strictly ascending).
func countStarts(keys []symKey, starts []uint64) int {
	n, j := len(starts), 0
	for i := 0; i < len(keys); {
		at := keys[i].start
		for i < len(keys) && keys[i].start == at {
			i++
		}
		j += gallop(starts[j:], at)
		if j < len(starts) && starts[j] == at {
			j++
		} else {
			n++
		}
	}
	return n
}

// gallop returns the least p with s[p] >= v (len(s) if none), s
// ascending, in time logarithmic in p: it probes s[0], s[1], s[3], s[7],
// ... then searches between the last two probes.
func gallop(s []uint64, v uint64) int {
	if len(s) == 0 || s[0] >= v {
		return 0 // dense symbols: the next start is the symbol's or past it
	}
	bound := 2
	for bound <= len(s) && s[bound-1] < v {
		bound <<= 1
	}
	lo, hi := bound>>1, min(bound, len(s)) // s[:lo] are all below v
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s[mid] < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// TrimGoABI drops the ABI suffix (".abi0", ".abiinternal") that Go's
// linker adds to a function's name in the object's symbol table when the
// function has ABI wrappers (cmd/link/internal/ld/symtab.go,
// mangleABIName). Go's own tools never show it: runtime/pprof names frames
// from the pclntab, and cmd/pprof (cmd/pprof/pprof.go, (*file).SourceLine)
// names Go functions by debug/gosym's PCToLine, also from the pclntab,
// whose names carry no suffix; dropping it lets macprof's profiles line up
// with `go test -cpuprofile` ones.
func TrimGoABI(name string) string {
	if n := len(name); n > 5 && name[n-5] == '.' && name[n-4:] == "abi0" {
		return name[:n-5]
	}
	return strings.TrimSuffix(name, ".abiinternal")
}

// sortKeys sorts keys by start, then rank, then index: a stable radix sort
// by start (keys come in index order), then each run of one start by rank
// and index. For the 100,000s of symbols of a large library, several
// times faster than comparing.
func sortKeys(keys []symKey) {
	byRank := func(a, b symKey) int {
		if a.pri != b.pri {
			return cmp.Compare(a.pri, b.pri)
		}
		return cmp.Compare(a.idx, b.idx)
	}
	if len(keys) < 1<<10 {
		slices.SortFunc(keys, func(a, b symKey) int {
			if a.start != b.start {
				return cmp.Compare(a.start, b.start)
			}
			return byRank(a, b)
		})
		return
	}
	var diff uint64 // the bits in which some start differs from the first
	for _, k := range keys {
		diff |= k.start ^ keys[0].start
	}
	tmp := make([]symKey, len(keys))
	src, dst := keys, tmp
	for shift := uint(0); shift < 64; shift += 8 {
		if diff>>shift&0xff == 0 {
			continue // the same byte in every start
		}
		var count [256]int
		for _, k := range src {
			count[k.start>>shift&0xff]++
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, k := range src {
			b := k.start >> shift & 0xff
			dst[count[b]] = k
			count[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j].start == keys[i].start {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(keys[i:j], byRank)
		}
		i = j
	}
}

// symKey is what NewTable sorts: a symbol's start, its rank among symbols
// at that start (lower wins) and its index in syms.
type symKey struct {
	start uint64
	pri   uint32
	idx   uint32
}

// Lookups go through a bucket table: the starts' address range is cut into
// buckets of 1<<shift bytes (256, or coarser to keep at most four per
// function and at most maxBuckets), and buckets[k] is the index of the
// function containing bucket k's start. A lookup is then a shift and a
// binary search among the few starts of one bucket, instead of a search
// over the whole table.
const (
	minBucketShift = 8
	maxBuckets     = 1 << 18
)

// buildBuckets fills the bucket table from t.starts.
func (t *Table) buildBuckets() {
	n := len(t.starts)
	if n == 0 {
		return
	}
	lo, span := t.starts[0], t.starts[n-1]-t.starts[0]
	// At most four buckets per function (and maxBuckets): memory stays
	// proportional to the symbols whatever the address span.
	limit := uint64(min(maxBuckets, 4*n+64))
	shift := uint(minBucketShift)
	for span>>shift >= limit {
		shift++
	}
	nb := int(span>>shift) + 1
	t.bucketBase, t.bucketShift = lo, shift
	// buckets[k], the greatest i with starts[i] <= lo + k<<shift, is
	// the count of starts after the first at or below that address:
	// each start counted at the first bucket not below it, then summed,
	// with no branch on the data.
	t.buckets = make([]uint32, nb+1)
	mask := uint64(1)<<shift - 1
	for _, a := range t.starts[1:] {
		d := a - lo
		k := d>>shift + (d&mask+mask)>>shift // ceil(d / 1<<shift) <= nb
		t.buckets[k]++
	}
	sum := uint32(0)
	for k, c := range t.buckets {
		sum += c
		t.buckets[k] = sum
	}
}

// HasLines reports whether the table has a LineSource (debug information
// for file:line and inlined frames).
func (t *Table) HasLines() bool { return t.lines != nil }

// Len returns the number of distinct function starts.
func (t *Table) Len() int { return len(t.starts) }

// Address maps a file offset to a link-time address.
func (t *Table) Address(fileOffset uint64) (uint64, bool) {
	if len(t.segments) == 0 {
		return fileOffset, true
	}
	for _, s := range t.segments {
		if fileOffset >= s.Offset && fileOffset-s.Offset < s.Size {
			return s.Addr + (fileOffset - s.Offset), true
		}
	}
	return 0, false
}

// FileOffset maps a link-time address to a file offset (the inverse of
// Address).
func (t *Table) FileOffset(addr uint64) (uint64, bool) {
	if len(t.segments) == 0 {
		return addr, true
	}
	for _, s := range t.segments {
		if addr >= s.Addr && addr-s.Addr < s.Size {
			return s.Offset + (addr - s.Addr), true
		}
	}
	return 0, false
}

// Lookup returns the function containing the link-time address addr: the
// symbol with the greatest start <= addr, provided addr is inside its size
// when the size is known.
func (t *Table) Lookup(addr uint64) (name string, start uint64, ok bool) {
	i := t.LookupIndex(addr)
	if i < 0 {
		return "", 0, false
	}
	return t.name(i), t.starts[i], true
}

// LookupIndex is Lookup returning the function's index in the table
// (0 <= i < Len()), or -1. Callers that keep per-function data (a
// demangled name, say) index it by i.
func (t *Table) LookupIndex(addr uint64) int {
	if len(t.buckets) == 0 || addr < t.bucketBase {
		return -1
	}
	k := (addr - t.bucketBase) >> t.bucketShift
	var i int
	if k >= uint64(len(t.buckets)-1) {
		i = len(t.starts) - 1 // past the last start
	} else {
		// The function containing addr is among the starts from the
		// one containing bucket k's start to the one containing bucket
		// k+1's start.
		first, last := int(t.buckets[k]), int(t.buckets[k+1])
		i = first + upperBound(t.starts[first:last+1], addr)
	}
	if t.ends != nil && t.ends[i] != 0 && addr >= t.ends[i] {
		return -1
	}
	return i
}

// LookupIndexNear is LookupIndex for a caller that looks addresses up in
// increasing order, near being the index the previous lookup returned
// (or -1): an address in that function or the next is found without a
// search.
func (t *Table) LookupIndexNear(addr uint64, near int) int {
	if near < 0 || near >= len(t.starts) || addr < t.starts[near] {
		return t.LookupIndex(addr)
	}
	i := near
	if i+1 < len(t.starts) && addr >= t.starts[i+1] {
		i++
		if i+1 < len(t.starts) && addr >= t.starts[i+1] {
			return t.LookupIndex(addr)
		}
	}
	if t.ends != nil && t.ends[i] != 0 && addr >= t.ends[i] {
		return -1
	}
	return i
}

// upperBound returns the greatest i with s[i] <= v, given s[0] <= v.
func upperBound(s []uint64, v uint64) int {
	base, n := 0, len(s)
	for n > 1 {
		half := n >> 1
		// borrow is 1 when s[base+half] > v: step by half
		// otherwise, with no branch to mispredict.
		_, borrow := bits.Sub64(v, s[base+half], 0)
		base += half & (int(borrow) - 1)
		n -= half
	}
	return base
}

// Symbol returns the name (as stored: Mach-O names are kept mangled) and
// start of the function at index i.
func (t *Table) Symbol(i int) (name string, start uint64) { return t.name(i), t.starts[i] }

// Start returns the start of the function at index i (Symbol without
// reading its name).
func (t *Table) Start(i int) uint64 { return t.starts[i] }

// Frame is one symbolized frame.
type Frame struct {
	// Function is the (demangled) function name, or "" when unknown.
	Function string
	// Offset is the address's distance from the function's start (named
	// or Anonymous); in a frame with neither, the address's link-time
	// address when Linked, else its offset from the image's start (the
	// object's table could not be read).
	Offset uint64
	// Start is, for an Anonymous frame, the link-time address of its
	// function's start: the address addr2line -e and atos -o take.
	Start uint64
	// Anonymous marks a frame in a function that has no name but a known
	// start (LC_FUNCTION_STARTS, say): Name is image+0xSTART, so that
	// every address of the function gets one name.
	Anonymous bool
	// Linked marks a frame with no function whose Offset is a link-time
	// address.
	Linked bool
	// File and Line locate the address in source, when debug info has it.
	File string
	Line int
	// Image is the base name of the object file.
	Image string
	// Inlined marks a frame inlined into the frame that follows it.
	Inlined bool
}

// Name returns the function name; for a function without one,
// image+0xSTART when its start is known (Anonymous), else image+0xADDR
// (the address itself, see Offset). Both are link-time addresses, as
// addr2line -e image and atos -o image take them, whenever the object's
// table was read.
func (f Frame) Name() string {
	if f.Function != "" {
		return f.Function
	}
	off := f.Offset
	if f.Anonymous {
		off = f.Start
	}
	var b strings.Builder
	b.WriteString(f.Image)
	b.WriteString("+0x")
	b.WriteString(hex(off))
	return b.String()
}

// Named reports whether the frame names a function: by its name, or by
// its start when it has none (Anonymous).
func (f Frame) Named() bool { return f.Function != "" || f.Anonymous }

func hex(v uint64) string {
	const digits = "0123456789abcdef"
	var buf [16]byte
	i := len(buf)
	for {
		i--
		buf[i] = digits[v&0xf]
		v >>= 4
		if v == 0 {
			break
		}
	}
	return string(buf[i:])
}
