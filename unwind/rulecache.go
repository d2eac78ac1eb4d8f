package unwind

// RuleCache remembers a Tables' answers by address in a direct-mapped
// cache: a profile's return addresses repeat from sample to sample (and
// recursion repeats them within one), so most frames need no table search.
// Tables that keep one expose it (Cached), and WalkCFI then looks there
// before calling Rule: a hit costs a multiply and a compare, and no call,
// which in the walk's loop would spill every live register. It is for one
// goroutine at a time, as the Tables that hold it are.
type RuleCache struct {
	slots [ruleCacheSlots]ruleCacheSlot
}

// ruleCacheSlots is the size of a RuleCache (a power of two): 80 KiB, of
// which a profile touches a slot per distinct return address.
const (
	ruleCacheBits  = 11
	ruleCacheSlots = 1 << ruleCacheBits
)

// ruleCacheSlot is one address's answer: its rule (nil: none) and whether
// its object keeps frame pointers. r is a copy of *rule, which the walk
// reads with pc, not after it.
type ruleCacheSlot struct {
	pc   uint64 // the address plus one: 0 marks an empty slot
	rule *Rule
	fp   bool
	r    Rule
}

// Cached is implemented by Tables that remember their answers in a
// RuleCache; RuleCache may return nil (no cache yet). Every answer the
// cache holds must be the one Rule would give.
type Cached interface {
	RuleCache() *RuleCache
}

// slot returns the slot of pc.
func (c *RuleCache) slot(pc uint64) *ruleCacheSlot {
	return &c.slots[(pc*0x9e3779b97f4a7c15)>>(64-ruleCacheBits)]
}

// Get returns the answer remembered for pc, if any.
func (c *RuleCache) Get(pc uint64) (r *Rule, framePointers, ok bool) {
	s := c.slot(pc)
	if s.pc != pc+1 {
		return nil, false, false
	}
	return s.rule, s.fp, true
}

// Put remembers the answer for pc, in place of the one its slot held.
func (c *RuleCache) Put(pc uint64, r *Rule, framePointers bool) {
	s := ruleCacheSlot{pc: pc + 1, rule: r, fp: framePointers}
	if r != nil {
		s.r = *r
	}
	*c.slot(pc) = s
}

// ruleCacheOf returns the cache of tables, nil where it has none.
func ruleCacheOf(tables Tables) *RuleCache {
	if c, ok := tables.(Cached); ok {
		return c.RuleCache()
	}
	return nil
}

// noCacheSlot is the slot of every address for a walk without a cache:
// empty, never written.
var noCacheSlot ruleCacheSlot

// slotOf is slot, or noCacheSlot on a nil cache.
func (c *RuleCache) slotOf(pc uint64) *ruleCacheSlot {
	if c == nil {
		return &noCacheSlot
	}
	return c.slot(pc)
}
