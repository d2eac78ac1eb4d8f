package sampler

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"slices"
	"unsafe"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// StackID names an interned stack. IDs are never reused by an Interner, so
// an ID that outlived its stack's eviction cannot name another stack. Zero
// is never issued: Intern returns it for a stack it cannot hold.
type StackID uint64

// DefaultMaxFramesPerStack sizes the default frame bound of NewInterner:
// maxStacks stacks of this many addresses on average.
const DefaultMaxFramesPerStack = 64

// InternStats counts what an Interner did since it was made.
type InternStats struct {
	// Hits and Misses count Intern calls that found or added a stack.
	Hits, Misses int64
	// Collisions counts misses whose hash matched a different stack.
	Collisions int64
	// Evictions counts stacks dropped to stay within the bounds.
	Evictions int64
	// Rejected counts stacks longer than the whole frame bound.
	Rejected int64
	// Stacks and Frames are the current contents.
	Stacks, Frames int
}

// internEntry is one interned stack. pcs is never modified after the entry
// is made, so Lookup and OnEvict can hand it out and callers may keep it.
type internEntry struct {
	id        StackID
	pcs       []uint64
	truncated bool
	next      *internEntry // another stack with the same hash
}

// Interner deduplicates stacks. Stacks are keyed by a 64-bit hash of their
// addresses in an LRU (golang-lru/v2's simplelru); a hit compares the
// addresses, so a hash collision never merges two different stacks:
// colliding stacks share the LRU slot as a chain and are evicted together.
//
// Memory is bounded by a number of stacks and a total number of addresses;
// the least recently used stacks are evicted to stay within both.
//
// Eviction and windows: an ID stays valid (Lookup finds it) until its stack
// is evicted. A window that still counts samples of an evicted stack learns
// of it through OnEvict and keeps the addresses it is handed; they are the
// interner's own immutable slice, so keeping them costs no copy. A window
// therefore holds at most its own distinct stacks beyond the LRU's bound.
//
// The hit path does not allocate. An Interner is not safe for concurrent
// use; the sampler uses it from one goroutine.
type Interner struct {
	seed      maphash.Seed
	hash      func(seed maphash.Seed, pcs []uint64) uint64
	lru       *simplelru.LRU[uint64, *internEntry]
	byID      map[StackID]*internEntry
	nextID    StackID
	maxStacks int
	maxFrames int
	stats     InternStats
	onEvict   func(id StackID, pcs []uint64, truncated bool)
}

// NewInterner returns an Interner holding at most maxStacks stacks and
// maxStacks*DefaultMaxFramesPerStack addresses.
func NewInterner(maxStacks int) (*Interner, error) {
	if maxStacks < 1 || maxStacks > 1<<30 {
		return nil, fmt.Errorf("interner size %d must be in [1, %d]", maxStacks, 1<<30)
	}
	return NewInternerLimits(maxStacks, maxStacks*DefaultMaxFramesPerStack)
}

// NewInternerLimits returns an Interner holding at most maxStacks stacks
// and maxFrames addresses over all of them.
func NewInternerLimits(maxStacks, maxFrames int) (*Interner, error) {
	if maxStacks < 1 || maxFrames < 1 {
		return nil, fmt.Errorf("interner bounds must be positive: %d stacks, %d frames", maxStacks, maxFrames)
	}
	// The LRU never evicts by itself (one spare slot): Intern evicts first,
	// whole chains, for both bounds.
	l, err := simplelru.NewLRU[uint64, *internEntry](maxStacks+1, nil)
	if err != nil {
		return nil, fmt.Errorf("interner: %w", err)
	}
	return &Interner{
		seed:      maphash.MakeSeed(),
		hash:      hashPCs,
		lru:       l,
		byID:      make(map[StackID]*internEntry),
		maxStacks: maxStacks,
		maxFrames: maxFrames,
	}, nil
}

// OnEvict registers f to be told of every stack evicted, so that a caller
// still counting it can keep its addresses (which it must not modify).
func (in *Interner) OnEvict(f func(id StackID, pcs []uint64, truncated bool)) { in.onEvict = f }

// hashPCs hashes the addresses' bytes with hash/maphash under the
// interner's seed (the runtime's AES-based hash on amd64 and arm64). It was
// measured against a word-at-a-time multiply-xorshift mix; see
// BenchmarkHash and bench/RESULTS.md.
func hashPCs(seed maphash.Seed, pcs []uint64) uint64 {
	return maphash.Bytes(seed, pcBytes(pcs))
}

// pcBytes views the addresses as bytes (host order), for hashing and for
// comparing with the runtime's vectorised memequal: slices.Equal compares
// one word at a time and was a third of the hit path's time.
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
// the whole frame bound.
func (in *Interner) Intern(pcs []uint64, truncated bool) StackID {
	h := in.hash(in.seed, pcs)
	head, ok := in.lru.Get(h)
	if ok {
		for e := head; e != nil; e = e.next {
			if e.truncated == truncated && equalPCs(e.pcs, pcs) {
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
		// The chain was just used, so makeRoom evicts it only when it is
		// all there is; look again.
		head, ok = in.lru.Peek(h)
	}
	in.nextID++
	e := &internEntry{id: in.nextID, pcs: slices.Clone(pcs), truncated: truncated}
	if e.pcs == nil {
		e.pcs = []uint64{}
	}
	in.byID[e.id] = e
	in.stats.Misses++
	in.stats.Stacks++
	in.stats.Frames += len(pcs)
	if ok {
		// A collision: chain the new stack behind the existing ones.
		e.next = head.next
		head.next = e
		return e.id
	}
	in.lru.Add(h, e)
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
			delete(in.byID, e.id)
			in.stats.Stacks--
			in.stats.Frames -= len(e.pcs)
			in.stats.Evictions++
			if in.onEvict != nil {
				in.onEvict(e.id, e.pcs, e.truncated)
			}
		}
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
func (in *Interner) Stats() InternStats { return in.stats }
