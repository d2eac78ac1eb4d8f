// Package intern deduplicates stacks: it gives each distinct stack of
// addresses a StackID, within bounds on stacks and addresses, so that a
// profile stores every stack once however often it was sampled.
package intern

import (
	"bytes"
	"fmt"
	"slices"
	"unsafe"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/macprof/macprof/unwind"
)

// StackID names an interned stack. IDs are never reused by an Interner, so
// an ID that outlived its stack's eviction cannot name another stack. Zero
// is never issued: Intern returns it for a stack it cannot hold.
type StackID uint64

// DefaultMaxFramesPerStack sizes the default frame bound of New:
// maxStacks stacks of this many addresses on average.
const DefaultMaxFramesPerStack = 64

// Stats counts what an Interner did since it was made.
type Stats struct {
	// Hits and Misses count Intern calls that found or added a stack.
	Hits, Misses int64
	// Collisions counts misses whose hash matched a different stack.
	Collisions int64
	// Evictions counts stacks dropped to stay within the bounds, and
	// ChainEvictions those of them dropped because their hash chain was
	// full (maxChain stacks of one hash: a sign of crafted collisions).
	Evictions, ChainEvictions int64
	// Rejected counts stacks longer than the whole frame bound.
	Rejected int64
	// Stacks and Frames are the current contents.
	Stacks, Frames int
}

// internEntry is one interned stack. pcs is never modified after the entry
// is made, so Lookup and OnEvict can hand it out and callers may keep it.
// The fields the hit path reads come first.
type internEntry struct {
	hash      uint64
	pcs       []uint64
	truncated bool
	id        StackID
	// placed is the Interner's clock when this entry last moved its
	// chain to the front of the LRU (made it, or refreshed it on a hit).
	placed uint64
	next   *internEntry // the next newer stack with the same hash
}

// maxChain bounds the stacks that share one hash, so that a target that
// crafts colliding stacks cannot make a lookup compare more than that; a
// new stack in a full chain evicts the chain's oldest.
const maxChain = 8

// Interner deduplicates stacks in an LRU (golang-lru/v2's simplelru) keyed
// by a 64-bit hash of their addresses (unwind.HashPCs, which the walker
// computes as it reads them); a hit compares the addresses, so a hash
// collision never merges two stacks. Colliding stacks share one LRU slot as
// a chain (oldest first) of at most maxChain stacks, evicted together.
//
// The hit path looks the hash up in a direct-mapped front table of recently
// found stacks and touches the LRU only when the stack last moved its chain
// to the LRU's front more than refresh (a quarter of the stack bound)
// Intern calls ago, so that a hot stack does not pay for recency on every
// call. Eviction is therefore LRU up to that lag, and an evicted stack
// leaves the front table at once.
//
// An ID stays valid (Lookup finds it) until its stack is evicted; a caller
// still counting an evicted stack learns of it through OnEvict and may keep
// the immutable addresses it is handed without a copy.
//
// The hit path does not allocate. An Interner is not safe for concurrent
// use.
type Interner struct {
	front     []*internEntry // indexed by hash & frontMask; nil or a live entry
	frontMask uint64
	clock     uint64 // counts Intern calls
	refresh   uint64 // see the type's comment
	hash      func(pcs []uint64) uint64
	lru       *simplelru.LRU[uint64, *internEntry] // hash -> chain
	byID      map[StackID]*internEntry
	nextID    StackID
	maxStacks int
	maxFrames int
	stats     Stats
	onEvict   func(id StackID, pcs []uint64, truncated bool)
}

// New returns an Interner holding at most maxStacks stacks and
// maxStacks*DefaultMaxFramesPerStack addresses.
func New(maxStacks int) (*Interner, error) {
	if maxStacks < 1 || maxStacks > 1<<30 {
		return nil, fmt.Errorf("interner size %d must be in [1, %d]", maxStacks, 1<<30)
	}
	return NewLimits(maxStacks, maxStacks*DefaultMaxFramesPerStack)
}

// maxFront bounds the front table, so that a large stack bound does not
// make a large table.
const maxFront = 1 << 16

// NewLimits returns an Interner holding at most maxStacks stacks and
// maxFrames addresses over all of them.
func NewLimits(maxStacks, maxFrames int) (*Interner, error) {
	if maxStacks < 1 || maxFrames < 1 {
		return nil, fmt.Errorf("interner bounds must be positive: %d stacks, %d frames", maxStacks, maxFrames)
	}
	// The LRU never evicts by itself (one spare slot): Intern evicts first,
	// whole chains, for both bounds.
	l, err := simplelru.NewLRU[uint64, *internEntry](maxStacks+1, nil)
	if err != nil {
		return nil, fmt.Errorf("interner: %w", err)
	}
	nf := 16
	for nf < maxStacks && nf < maxFront {
		nf *= 2
	}
	return &Interner{
		front:     make([]*internEntry, nf),
		frontMask: uint64(nf - 1),
		refresh:   uint64(maxStacks / 4),
		hash:      unwind.HashPCs,
		lru:       l,
		byID:      make(map[StackID]*internEntry),
		maxStacks: maxStacks,
		maxFrames: maxFrames,
	}, nil
}

// OnEvict registers f to be told of every stack evicted, so that a caller
// still counting it can keep its addresses (which it must not modify).
func (in *Interner) OnEvict(f func(id StackID, pcs []uint64, truncated bool)) { in.onEvict = f }

// pcBytes views the addresses as bytes (host order), so that they are
// compared with the runtime's vectorised memequal rather than word by word.
func pcBytes(pcs []uint64) []byte {
	if len(pcs) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(pcs))), len(pcs)*8)
}

// equalPCs reports whether two stacks hold the same addresses.
func equalPCs(a, b []uint64) bool {
	return len(a) == len(b) && bytes.Equal(pcBytes(a), pcBytes(b))
}

// Intern returns the ID of the stack pcs (PC first, then return
// addresses), adding a copy of it when it is new; the truncated flag is
// part of the stack's identity. It returns 0 only for a stack longer than
// the whole frame bound. It hashes pcs with unwind.HashPCs; a caller that
// has the hash already (unwind.Result.Hash) should use InternHashed.
func (in *Interner) Intern(pcs []uint64, truncated bool) StackID {
	return in.intern(pcs, in.hash(pcs), truncated)
}

// InternHashed is Intern for a stack whose hash is known: hash must be
// unwind.HashPCs(pcs), as unwind.Walker.Walk reports it in Result.Hash for
// the addresses it returned, or 0, in which case InternHashed computes it.
// A wrong hash never merges two stacks (a hit compares the addresses), but
// the stack is then filed under the wrong key and interned again, under
// another ID, when it comes with its true hash.
func (in *Interner) InternHashed(pcs []uint64, hash uint64, truncated bool) StackID {
	if hash == 0 {
		hash = in.hash(pcs)
	}
	return in.intern(pcs, hash, truncated)
}

func (in *Interner) intern(pcs []uint64, hash uint64, truncated bool) StackID {
	in.clock++
	slot := &in.front[hash&in.frontMask]
	if e := *slot; e != nil && e.hash == hash && e.truncated == truncated && equalPCs(e.pcs, pcs) {
		if in.clock-e.placed > in.refresh {
			// The chain is in the LRU: every entry the front table
			// holds is live.
			in.lru.Get(hash)
			e.placed = in.clock
		}
		in.stats.Hits++
		return e.id
	}
	return in.internSlow(pcs, hash, truncated, slot)
}

// internSlow looks the stack up in the LRU, and adds it when it is new.
func (in *Interner) internSlow(pcs []uint64, hash uint64, truncated bool, slot **internEntry) StackID {
	head, ok := in.lru.Get(hash)
	n := 0 // the chain's length
	if ok {
		for e := head; e != nil; e = e.next {
			n++
			if e.truncated == truncated && equalPCs(e.pcs, pcs) {
				e.placed = in.clock
				*slot = e
				in.stats.Hits++
				return e.id
			}
		}
		in.stats.Collisions++
	}
	if len(pcs) > in.maxFrames {
		in.stats.Rejected++
		return 0
	}
	in.makeRoom(len(pcs))
	if ok {
		// The chain was just used, so makeRoom evicts it (whole) only
		// when it is all there is; look again.
		head, ok = in.lru.Peek(hash)
	}
	if ok && n >= maxChain {
		// A full chain: its oldest stack makes room for the new one. The
		// next one becomes the LRU's value (the chain is at the LRU's
		// front already: Add moves nothing).
		old := head
		head, old.next = old.next, nil // maxChain > 1: there is a next
		in.lru.Add(hash, head)
		in.stats.ChainEvictions++
		in.evicted(old)
	}
	in.nextID++
	e := &internEntry{hash: hash, id: in.nextID, pcs: slices.Clone(pcs), truncated: truncated, placed: in.clock}
	if e.pcs == nil {
		e.pcs = []uint64{}
	}
	in.byID[e.id] = e
	in.stats.Misses++
	in.stats.Stacks++
	in.stats.Frames += len(pcs)
	if ok {
		// A collision: the new stack ends the chain.
		last := head
		for last.next != nil {
			last = last.next
		}
		last.next = e
	} else {
		in.lru.Add(hash, e)
	}
	*slot = e
	return e.id
}

// makeRoom evicts the least recently used chains until one more stack of n
// addresses fits.
func (in *Interner) makeRoom(n int) {
	for in.stats.Stacks+1 > in.maxStacks || in.stats.Frames+n > in.maxFrames {
		_, head, ok := in.lru.RemoveOldest()
		if !ok {
			return
		}
		for e := head; e != nil; e = e.next {
			in.evicted(e)
		}
	}
}

// evicted forgets a stack that left the LRU (with its chain or alone) and
// tells OnEvict.
func (in *Interner) evicted(e *internEntry) {
	if slot := &in.front[e.hash&in.frontMask]; *slot == e {
		*slot = nil
	}
	delete(in.byID, e.id)
	in.stats.Stacks--
	in.stats.Frames -= len(e.pcs)
	in.stats.Evictions++
	if in.onEvict != nil {
		in.onEvict(e.id, e.pcs, e.truncated)
	}
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

// Stats returns the interner's counters and current size.
func (in *Interner) Stats() Stats { return in.stats }
