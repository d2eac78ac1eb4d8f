package symbolize

import (
	"cmp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/macprof/macprof/demangle"
	"github.com/macprof/macprof/internal/objfile"
)

// A batch of addresses is looked up in address order (each function's
// line table walked once for all its addresses), its names demangled on
// every CPU, and printed in the order the addresses came.

// batch prints the lines for words, in their order, having looked the
// table's addresses up in increasing order (so that the line tables of a
// function are walked once for all of its addresses); false when some
// word is not an address.
func (s *symbolizer) batch(w *output, words [][]byte) bool {
	s.answers = slices.Grow(s.answers[:0], len(words))[:len(words)]
	s.order = s.order[:0]
	for i, word := range words {
		a := &s.answers[i]
		s.parse(a, word)
		if a.isAddr && a.img != nil && s.fast() {
			s.order = append(s.order, batchKey{a.addr, i})
		}
	}
	s.sortOrder()
	for _, k := range s.order {
		s.resolve(&s.answers[k.i])
	}
	s.demangleQueued()
	all := true
	for i, word := range words {
		s.print(w, &s.answers[i], word)
		all = all && s.answers[i].isAddr
	}
	return all
}

// sortOrder sorts s.order by address: as single words (address above,
// index below) when both fit in 64 bits, which sorts several times faster
// than pairs.
func (s *symbolizer) sortOrder() {
	const indexBits = 20
	if len(s.order) > 1<<indexBits || len(s.order) < 2 {
		slices.SortFunc(s.order, func(x, y batchKey) int { return cmp.Compare(x.addr, y.addr) })
		return
	}
	s.packed = s.packed[:0]
	for _, k := range s.order {
		if k.addr >= 1<<(64-indexBits) {
			slices.SortFunc(s.order, func(x, y batchKey) int { return cmp.Compare(x.addr, y.addr) })
			return
		}
		s.packed = append(s.packed, k.addr<<indexBits|uint64(k.i))
	}
	s.packed, s.scratch = radixSort(s.packed, s.scratch)
	for j, v := range s.packed {
		s.order[j] = batchKey{v >> indexBits, int(v & (1<<indexBits - 1))}
	}
}

// radixSort sorts v (least significant byte first, only as many bytes as
// its largest value has), using tmp as the other buffer; it returns the
// sorted slice and the buffer to reuse, either of which may be v's.
// A batch's random addresses sort several times faster than by compares.
func radixSort(v, tmp []uint64) (sorted, buf []uint64) {
	var top uint64
	for _, x := range v {
		top |= x
	}
	tmp = slices.Grow(tmp[:0], len(v))[:len(v)]
	for shift := uint(0); shift < 64 && top>>shift != 0; shift += 8 {
		var count [257]int
		for _, x := range v {
			count[(x>>shift)&0xff+1]++
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for _, x := range v {
			d := (x >> shift) & 0xff
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
		for _, i := range q {
			s.names[i] = demangle.Name(s.names[i], demangle.Simplified)
		}
		return
	}
	// Blocks handed out in turn, so that no worker idles while another
	// has a run of long names left.
	const block = 64
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
			for {
				lo := int(next.Add(block)) - block
				if lo >= len(q) {
					return
				}
				for _, i := range q[lo:min(lo+block, len(q))] {
					s.names[i] = demangle.Name(s.names[i], demangle.Simplified)
				}
			}
		})
	}
	wg.Wait()
}

// minPerWorker is how many names make it worth starting one more
// goroutine to demangle them.
const minPerWorker = 256
