// Not upstream: a macprof patch (PATCHES.md).

package demangle

import (
	"sync"
	"unsafe"
)

// An astSet is the set of nodes a simplify walk has seen: an
// open-addressing hash table over the nodes' pointers, reused through a
// pool. It answers as map[AST]bool did for simplify at a fraction of the
// cost (simplify was a third of the time to demangle a C++ name, most of
// it in that map).
type astSet struct {
	slots []AST // len is a power of two; nil is empty
	n     int
}

// maxPooledSlots bounds the table a pooled set keeps: a rare huge name
// must not make every later walk clear a large table.
const maxPooledSlots = 1 << 12

var astSets = sync.Pool{New: func() interface{} { return &astSet{slots: make([]AST, 64)} }}

func newASTSet() *astSet { return astSets.Get().(*astSet) }

// release clears s and returns it to the pool.
func (s *astSet) release() {
	if len(s.slots) > maxPooledSlots {
		return
	}
	for i := range s.slots {
		s.slots[i] = nil
	}
	s.n = 0
	astSets.Put(s)
}

// astHash hashes a by the pointer it holds (every AST is a pointer type).
func astHash(a AST) uintptr {
	p := uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&a))[1])
	h := (p >> 3) * 0x9E3779B97F4A7C15
	return h ^ h>>32
}

// visit adds a to s and reports whether it was there already.
func (s *astSet) visit(a AST) bool {
	mask := uintptr(len(s.slots) - 1)
	for i := astHash(a) & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case nil:
			s.slots[i] = a
			s.n++
			if 2*s.n > len(s.slots) {
				s.grow()
			}
			return false
		case a:
			return true
		}
	}
}

// grow doubles s's table.
func (s *astSet) grow() {
	old := s.slots
	s.slots = make([]AST, 2*len(old))
	mask := uintptr(len(s.slots) - 1)
	for _, a := range old {
		if a == nil {
			continue
		}
		i := astHash(a) & mask
		for s.slots[i] != nil {
			i = (i + 1) & mask
		}
		s.slots[i] = a
	}
}
