package sampler

import (
	"fmt"
	"hash/maphash"
	"slices"
	"unsafe"

	lru "github.com/hashicorp/golang-lru/v2"
)

// StackID names an interned stack. IDs are never reused by an Interner, so
// an ID that outlived its stack's eviction cannot name another stack.
type StackID uint64

// Interner deduplicates stacks. Stacks are keyed by a 64-bit hash of their
// addresses in an LRU of bounded size; a hit compares the addresses, so a
// hash collision never merges two different stacks (colliding stacks share
// an LRU slot as a chain). The hit path does not allocate. It is not safe
// for concurrent use.
type Interner struct {
	seed    maphash.Seed
	hash    func(seed maphash.Seed, pcs []uint64) uint64
	lru     *lru.Cache[uint64, *internEntry]
	byID    map[StackID]*internEntry
	nextID  StackID
	onEvict func(id StackID, pcs []uint64, truncated bool)
}

type internEntry struct {
	id        StackID
	pcs       []uint64
	truncated bool
	next      *internEntry // another stack with the same hash
}

// NewInterner returns an Interner holding at most maxStacks hash slots.
func NewInterner(maxStacks int) (*Interner, error) {
	if maxStacks < 1 {
		return nil, fmt.Errorf("interner size %d must be positive", maxStacks)
	}
	in := &Interner{seed: maphash.MakeSeed(), hash: hashPCs, byID: make(map[StackID]*internEntry)}
	c, err := lru.NewWithEvict(maxStacks, in.evicted)
	if err != nil {
		return nil, fmt.Errorf("interner: %w", err)
	}
	in.lru = c
	return in, nil
}

// OnEvict registers f to be told of every stack the LRU evicts, so that a
// caller still counting it can keep a copy.
func (in *Interner) OnEvict(f func(id StackID, pcs []uint64, truncated bool)) { in.onEvict = f }

// hashPCs hashes the addresses' bytes with the runtime's AES-based hash.
func hashPCs(seed maphash.Seed, pcs []uint64) uint64 {
	if len(pcs) == 0 {
		return maphash.Bytes(seed, nil)
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&pcs[0])), len(pcs)*8)
	return maphash.Bytes(seed, b)
}

// Intern returns the ID of the stack pcs, adding a copy of it when it is
// new. The truncated flag is part of the stack's identity.
func (in *Interner) Intern(pcs []uint64, truncated bool) StackID {
	h := in.hash(in.seed, pcs)
	head, ok := in.lru.Get(h)
	if ok {
		for e := head; e != nil; e = e.next {
			if e.truncated == truncated && slices.Equal(e.pcs, pcs) {
				return e.id
			}
		}
	}
	in.nextID++
	e := &internEntry{id: in.nextID, pcs: slices.Clone(pcs), truncated: truncated}
	in.byID[e.id] = e
	if ok {
		// A collision: chain the new stack behind the existing ones.
		e.next = head.next
		head.next = e
		return e.id
	}
	in.lru.Add(h, e)
	return e.id
}

// Lookup returns the addresses of an interned stack. The slice must not be
// modified. found is false once the stack was evicted.
func (in *Interner) Lookup(id StackID) (pcs []uint64, truncated bool, found bool) {
	e, ok := in.byID[id]
	if !ok {
		return nil, false, false
	}
	return e.pcs, e.truncated, true
}

// Len returns the number of stacks held.
func (in *Interner) Len() int { return len(in.byID) }

func (in *Interner) evicted(_ uint64, head *internEntry) {
	for e := head; e != nil; e = e.next {
		delete(in.byID, e.id)
		if in.onEvict != nil {
			in.onEvict(e.id, e.pcs, e.truncated)
		}
	}
}
