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
// it in that map). A slot holds a member only when it carries the set's
// generation, so that emptying the set is a new generation, not a clear
// of the whole table (whose interface slots were written under the
// garbage collector's barriers: a fifth of demangling a name, once one
// long name had grown the pooled table).
type astSet struct {
	slots []astSlot // len is a power of two
	n     int
	gen   uint32 // never 0, the generation of a zeroed slot
}

type astSlot struct {
	a   AST
	gen uint32
}

// maxPooledSlots bounds the table a pooled set keeps: a rare huge name
// must not make every later walk clear a large table.
const maxPooledSlots = 1 << 12

var astSets = sync.Pool{New: func() interface{} { return &astSet{slots: make([]astSlot, 64), gen: 1} }}

func newASTSet() *astSet { return astSets.Get().(*astSet) }

// release empties s and returns it to the pool.
func (s *astSet) release() {
	if len(s.slots) > maxPooledSlots {
		return
	}
	s.n = 0
	if s.gen++; s.gen == 0 {
		// Generations wrapped: old slots would look current.
		for i := range s.slots {
			s.slots[i] = astSlot{}
		}
		s.gen = 1
	}
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
		sl := &s.slots[i]
		switch {
		case sl.gen != s.gen:
			sl.a, sl.gen = a, s.gen
			s.n++
			if 2*s.n > len(s.slots) {
				s.grow()
			}
			return false
		case sl.a == a:
			return true
		}
	}
}

// grow doubles s's table.
func (s *astSet) grow() {
	old := s.slots
	s.slots = make([]astSlot, 2*len(old))
	mask := uintptr(len(s.slots) - 1)
	for _, sl := range old {
		if sl.gen != s.gen {
			continue
		}
		i := astHash(sl.a) & mask
		for s.slots[i].gen == s.gen {
			i = (i + 1) & mask
		}
		s.slots[i] = sl
	}
}
