package symbolize

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/macprof/macprof/demangle"
	"github.com/macprof/macprof/internal/objfile"
)

// A batch of addresses is looked up in address order (each function's
// line table walked once for all its addresses), its names demangled on
// every CPU, and printed in the order the addresses came.

// batch prints the lines for the words of s.answers, in their order,
// having looked the table's addresses up in increasing order (so that the
// line tables of a function are walked once for all of its addresses).
// It empties s.answers and s.notAddrs, and returns false when some word
// is not an address.
func (s *symbolizer) batch(w *output) bool {
	if s.fast() {
		s.resolveInOrder()
	}
	s.demangleQueued()
	all := true
	var names [gatherChunk]gathered
	for k := range s.answers.blockCount() {
		block := s.answers.block(k)
		for lo := 0; lo < len(block); lo += gatherChunk {
			chunk := block[lo:min(lo+gatherChunk, len(block))]
			if s.fast() {
				s.gather(names[:len(chunk)], chunk)
				if s.table.HasLines() {
					all = s.printLines(w, chunk, names[:len(chunk)]) && all
				} else {
					all = s.printSymbols(w, chunk, names[:len(chunk)]) && all
				}
				continue
			}
			for i := range chunk {
				a := &chunk[i]
				s.print(w, a, &names[i])
				all = all && a.fn != notAddr
			}
		}
	}
	s.answers.reset()
	s.notAddrs = s.notAddrs[:0]
	return all
}

// printLines prints the answers of chunk (g: what gather read for them),
// from the table: those with a file:line (most of a Go binary's) in one
// loop that keeps the buffer in locals, not by a call to print each, and
// writes such a line, where its name has 8 to 64 bytes and its line 4
// digits at most, in moves of 8 and 16 bytes with one check of the
// buffer's room, not by appends; lines with no file:line by putSymbolLine.
// It returns false when some word is not an address.
func (s *symbolizer) printLines(w *output, chunk []answer, g []gathered) bool {
	all := true
	b, files, mid := w.buf, s.files, s.lineMid
	for i := range chunk {
		a := &chunk[i]
		name := g[i].name
		if a.fn >= 0 && (name == "" || a.file < 0) && len(name)+len(s.anonHead.s)+len(s.anonMid.s)+64 <= cap(b)-len(b) {
			// A line with no file:line, "NAME (in image) + OFF" or,
			// for an unnamed function, "image+0xSTART (in image) +
			// OFF" (most of a stripped binary's lines).
			va, _ := s.table.Address(s.segAt(s.segIndex(a.addr)).FileOffset(a.addr))
			p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), len(b))
			q := s.putSymbolLine(p, name, g[i].start, va-g[i].start)
			b = b[:len(b)+int(uintptr(q)-uintptr(p))]
			if len(b) >= flushAt {
				w.done(b)
				b = w.buf
			}
			continue
		}
		if name == "" || a.file < 0 {
			w.buf = b
			s.print(w, a, &g[i])
			b = w.buf
			all = all && a.fn != notAddr
			continue
		}
		file, n := files[a.file], len(name)
		if n >= 8 && n <= 64 && uint32(a.line) < 10000 && cap(b)-len(b) >= n+len(mid.s)+len(file.s)+64 {
			// The whole line by moves of 8 and 16 bytes: the name's
			// within it (it may end a mapping), mid's and file's
			// past their ends, into their padding (see padded), and
			// all within b's capacity.
			p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), len(b))
			moveShort(p, name)
			q := unsafe.Add(p, n)
			movePadded(q, mid)
			q = unsafe.Add(q, len(mid.s))
			movePadded(q, file)
			q = unsafe.Add(q, len(file.s))
			d := (*[6]byte)(q)
			switch v := a.line; {
			case v < 10:
				d[0], d[1], d[2] = byte('0'+v), ')', '\n'
				q = unsafe.Add(q, 3)
			case v < 100:
				d[0], d[1], d[2], d[3] = decPairs[2*v], decPairs[2*v+1], ')', '\n'
				q = unsafe.Add(q, 4)
			case v < 1000:
				r := v % 100
				d[0], d[1], d[2], d[3], d[4] = byte('0'+v/100), decPairs[2*r], decPairs[2*r+1], ')', '\n'
				q = unsafe.Add(q, 5)
			default:
				h, r := v/100, v%100
				d[0], d[1], d[2], d[3], d[4], d[5] = decPairs[2*h], decPairs[2*h+1], decPairs[2*r], decPairs[2*r+1], ')', '\n'
				q = unsafe.Add(q, 6)
			}
			b = b[:len(b)+int(uintptr(q)-uintptr(p))]
		} else {
			b = appendShort(b, name)
			b = append(b, mid.s...)
			b = append(b, file.s...) // "base name:" (see fileIndexOf)
			b = appendDec(b, int64(a.line))
			b = append(b, ')', '\n')
		}
		if len(b) >= flushAt {
			w.done(b)
			b = w.buf
		}
	}
	w.buf = b
	return all
}

// printSymbols is printLines for a table without lines (a Mach-O file
// without its dSYM, an ELF file without DWARF), whose answers have no
// file: each line "NAME (in image) + OFF" or "image+0xSTART (in image) +
// OFF", or print's. It is a loop with few values live across it, which
// the compiler keeps in registers (printLines' reloaded a dozen from the
// stack at each answer).
func (s *symbolizer) printSymbols(w *output, chunk []answer, g []gathered) bool {
	all := true
	b := w.buf
	room := len(s.anonHead.s) + len(s.anonMid.s) + 64
	for i := range chunk {
		a := &chunk[i]
		name, start := g[i].name, g[i].start
		if a.fn < 0 || cap(b)-len(b) < len(name)+room {
			w.buf = b
			s.print(w, a, &g[i])
			b = w.buf
			all = all && a.fn != notAddr
			continue
		}
		va, _ := s.table.Address(s.segAt(s.segIndex(a.addr)).FileOffset(a.addr))
		p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), len(b))
		q := s.putSymbolLine(p, name, start, va-start)
		b = b[:len(b)+int(uintptr(q)-uintptr(p))]
		if len(b) >= flushAt {
			w.done(b)
			b = w.buf
		}
	}
	w.buf = b
	return all
}

// putSymbolLine writes at p the line of an address off bytes into the
// function name starts (image+0xSTART when name is ""), which has no
// file:line, and returns the address past its newline: by moves of 16
// bytes and digits written in place. p must have room for len(name) +
// len(s.anonHead.s) + len(s.anonMid.s) + 64 bytes.
func (s *symbolizer) putSymbolLine(p unsafe.Pointer, name string, start, off uint64) unsafe.Pointer {
	var q unsafe.Pointer
	if name == "" {
		movePadded(p, s.anonHead)
		q = putHex(unsafe.Add(p, len(s.anonHead.s)), start)
	} else {
		if n := len(name); n >= 8 && n <= 64 {
			moveShort(p, name)
		} else {
			copy(unsafe.Slice((*byte)(p), n), name)
		}
		q = unsafe.Add(p, len(name))
	}
	movePadded(q, s.anonMid)
	q = putUint(unsafe.Add(q, len(s.anonMid.s)), off)
	*(*byte)(q) = '\n'
	return unsafe.Add(q, 1)
}

// answerList holds a batch's answers in blocks, which it keeps from batch
// to batch: one slice grown by append copied them to fresh memory at each
// growth (twice the memory touched), and the words' count is not known
// before they are read.
type answerList struct {
	blocks []*answerBlock
	n      int
	// resolvable counts the answers to be looked up in the table (fn
	// noFunction), ^notLo and hi are the least and greatest of their
	// addresses: kept as the words are added, which spares
	// resolveInOrder a pass over the answers (2.4 MB for the bench's
	// 100,000).
	resolvable int
	notLo, hi  uint64
}

// reset empties l, keeping its blocks.
func (l *answerList) reset() {
	l.n, l.resolvable, l.notLo, l.hi = 0, 0, 0, 0
}

// addResolvable counts an answer at addr to be looked up in the table.
func (l *answerList) addResolvable(addr uint64) {
	l.resolvable++
	l.notLo, l.hi = max(l.notLo, ^addr), max(l.hi, addr)
}

// answerBits is the log2 of the answers a block holds (96 KiB of them).
const answerBits = 12

type answerBlock [1 << answerBits]answer

func (l *answerList) len() int { return l.n }

// at returns answer i.
func (l *answerList) at(i int) *answer {
	return &l.blocks[i>>answerBits][i&(1<<answerBits-1)]
}

// push appends a.
func (l *answerList) push(a answer) {
	k := l.n >> answerBits
	if k == len(l.blocks) {
		l.blocks = append(l.blocks, new(answerBlock))
	}
	l.blocks[k][l.n&(1<<answerBits-1)] = a
	l.n++
}

// blockCount is how many blocks the answers fill, the last maybe in part.
func (l *answerList) blockCount() int { return (l.n + 1<<answerBits - 1) >> answerBits }

// block returns the answers of block k.
func (l *answerList) block(k int) []answer {
	return l.blocks[k][:min(1<<answerBits, l.n-k<<answerBits)]
}

// gathered is what print reads of an answer's function: its name (the
// line tables' or the table's) and start.
type gathered struct {
	name  string
	start uint64
}

// gatherChunk is how many answers gather reads ahead of print.
const gatherChunk = 128

// gather reads into g the name and start of each answer's function (the
// zero gathered for an answer in none), and the first byte of each name:
// answers come in input order, their functions at random, and print's
// loads of names[fn] and starts[fn] each missed the cache in turn (a
// libLLVM batch: two thirds of print's own time on those two loads); in
// this loop of independent loads the misses overlap.
func (s *symbolizer) gather(g []gathered, answers []answer) {
	var touch byte
	for i := range answers {
		a := &answers[i]
		name, start := "", uint64(0)
		if a.name >= 0 {
			name = s.lnames[a.name]
		}
		if a.fn >= 0 {
			if name == "" {
				name = s.names[a.fn]
			}
			start = s.starts[a.fn]
		}
		if name != "" {
			touch += name[0]
		}
		g[i] = gathered{name, start}
	}
	s.touched += touch
}

// resolveInOrder resolves the addresses of s.answers in the binary in
// increasing order: sorted as single words (address less the least one
// above, index below) when they fit in 64 bits, which sorts several times
// faster than pairs.
func (s *symbolizer) resolveInOrder() {
	const indexBits = 20
	lo, hi, n := ^s.answers.notLo, s.answers.hi, s.answers.resolvable
	if n == 0 {
		return
	}
	if s.names == nil {
		// Room for the functions the first batch can meet: grown by
		// append, node's 70,000 took twice their memory, all of it
		// touched. (metLines grow by append: they are for the
		// functions with lines alone.)
		m := min(n, s.table.Len())
		s.names, s.starts = make([]string, 0, m), make([]uint64, 0, m)
		if s.table.HasLines() {
			s.metIndex, s.symbolNamed = make([]int32, 0, m), make([]bool, 0, m)
		}
	}
	if s.answers.len() > 1<<indexBits || hi-lo >= 1<<(64-indexBits) {
		s.order = s.order[:0]
		for i := range s.answers.len() {
			if a := s.answers.at(i); a.fn == noFunction {
				s.order = append(s.order, batchKey{a.addr, i})
			}
		}
		slices.SortFunc(s.order, func(x, y batchKey) int { return cmp.Compare(x.addr, y.addr) })
		for _, k := range s.order {
			s.resolve(&s.answers.at(k.i).found, k.addr)
		}
		return
	}
	s.packed = slices.Grow(s.packed[:0], n)
	for k := range s.answers.blockCount() {
		for j, a := range s.answers.block(k) {
			if a.fn == noFunction {
				s.packed = append(s.packed, (a.addr-lo)<<indexBits|uint64(k<<answerBits+j))
			}
		}
	}
	// The words come in index order: sorting by the address bits alone
	// keeps the order of equal addresses.
	s.packed, s.scratch = radixSort(s.packed, s.scratch, indexBits)
	// Resolved into a small buffer in address order, then copied to
	// the answers (in the words' order, so at random) in a loop of
	// stores alone, which overlap: resolve's own stores at random
	// stalled it.
	if s.found == nil {
		s.found = new([resolveChunk]found)
	}
	found := s.found
	for lo0 := 0; lo0 < len(s.packed); lo0 += resolveChunk {
		chunk := s.packed[lo0:min(lo0+resolveChunk, len(s.packed))]
		for j, k := range chunk {
			found[j] = unresolved
			s.resolve(&found[j], lo+k>>indexBits)
		}
		for j, k := range chunk {
			s.answers.at(int(k & (1<<indexBits - 1))).found = found[j]
		}
	}
}

// resolveChunk is how many answers resolveInOrder resolves before it
// copies them to their places (16 bytes each: a buffer that stays in the
// cache).
const resolveChunk = 2048

// radixSort sorts v by its bits from skip up (least significant digit
// first, 11 bits a digit, only as many digits as its largest value has),
// keeping the order of values equal in those bits, using tmp as the other
// buffer; it returns the sorted slice and the buffer to reuse, either of
// which may be v's. A batch's random addresses sort several times faster
// than by compares; 11-bit digits (counts that fit the L1 cache) sort a
// Go binary's (21 bits) in two passes, not three of a byte.
func radixSort(v, tmp []uint64, skip uint) (sorted, buf []uint64) {
	const digit = 11
	var top uint64
	for _, x := range v {
		top |= x
	}
	tmp = slices.Grow(tmp[:0], len(v))[:len(v)]
	var count [1<<digit + 1]int
	for shift := skip; shift < 64 && top>>shift != 0; shift += digit {
		clear(count[:])
		for _, x := range v {
			count[(x>>shift)&(1<<digit-1)+1]++
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for _, x := range v {
			d := (x >> shift) & (1<<digit - 1)
			tmp[count[d]] = x
			count[d]++
		}
		v, tmp = tmp, v
	}
	return v, tmp
}

// demangleQueued demangles the names resolve queued, spread over the
// CPUs when there are enough of them: C++ names are most of a large
// binary's symbolization time, and each is demangled independently.
func (s *symbolizer) demangleQueued() {
	q := s.queued
	s.queued = s.queued[:0]
	workers := min(runtime.GOMAXPROCS(0), len(q)/minPerWorker)
	if workers <= 1 {
		for lo := 0; lo < len(q); lo += demangleBlock {
			s.touched += s.demangleBlock(q[lo:min(lo+demangleBlock, len(q))])
		}
		return
	}
	// Blocks handed out in turn, so that no worker idles while another
	// has a run of long names left.
	const block = demangleBlock
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			// The raw names may lie in the file's mapping.
			var err error
			defer func() {
				if err != nil {
					s.fault.CompareAndSwap(nil, &err)
				}
			}()
			defer objfile.RecoverFault(&err, objfile.PanicOnFault())
			var touched byte
			defer func() { s.workersTouched.Add(uint32(touched)) }()
			for {
				lo := int(next.Add(block)) - block
				if lo >= len(q) {
					return
				}
				touched += s.demangleBlock(q[lo:min(lo+block, len(q))])
			}
		})
	}
	wg.Wait()
}

// demangleBlock is how many names demangleBlock is given at a time.
const demangleBlock = 64

// demangleBlock demangles the names of q (indexes in s.names, at most
// demangleBlock of them), having first read each one's first and last
// bytes in a loop of independent loads, whose misses overlap: resolve
// leaves the names unread, and each one's first read (a name of the
// file's string table, met at random) missed the caches and the TLB in
// turn, in the demangler's first compare. It returns the sum of the bytes
// read, to be kept so that the loads stay.
func (s *symbolizer) demangleBlock(q []int32) byte {
	var touch byte
	for _, i := range q {
		if n := s.names[i]; n != "" {
			touch += n[0] + n[len(n)-1]
		}
	}
	for _, i := range q {
		s.names[i] = demangle.Name(s.names[i], demangle.Simplified)
	}
	return touch
}

// minPerWorker is how many names make it worth starting one more
// goroutine to demangle them.
const minPerWorker = 256
