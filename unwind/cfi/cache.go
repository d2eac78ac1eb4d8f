package cfi

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/macprof/macprof/unwind"
)

// CacheOptions bounds a Cache.
type CacheOptions struct {
	// MaxTables bounds how many objects' tables stay loaded (default 128).
	MaxTables int
	// Wait is how long the first lookup that needs an object waits for its
	// table (default 2 s); past it the lookup goes on without, and a
	// later one picks the table up once built.
	Wait time.Duration
	// Load builds a table (default Load); tests replace it.
	Load func(path string) (*Table, error)
}

// maxLoads bounds the table builds running at once: each may be stuck on a
// file a target serves for ever.
const maxLoads = 4

// Cache holds the tables of objects, keyed like symbol tables (by build ID,
// else path), built on first use and bounded in number. It is safe for
// concurrent use.
type Cache struct {
	wait  time.Duration
	load  func(string) (*Table, error)
	slots chan struct{}

	mu     sync.Mutex
	tables *lru.Cache[string, *entry]
}

type entry struct {
	done   chan struct{} // closed once t and err are set
	waiter atomic.Bool   // a lookup has waited for the build (only one does)
	t      *Table
	err    error
}

// NewCache returns an empty cache.
func NewCache(opts CacheOptions) *Cache {
	if opts.MaxTables <= 0 {
		opts.MaxTables = 128
	}
	if opts.Wait <= 0 {
		opts.Wait = 2 * time.Second
	}
	if opts.Load == nil {
		opts.Load = Load
	}
	c := &Cache{wait: opts.Wait, load: opts.Load, slots: make(chan struct{}, maxLoads)}
	c.tables, _ = lru.New[string, *entry](opts.MaxTables)
	return c
}

// Table returns the table of the object identified by key at path: at once
// when built; for the first caller of a key, after waiting up to the
// cache's Wait for the build; nil while it is being built, when it failed,
// or when maxLoads builds are already running (a later call tries again).
func (c *Cache) Table(key, path string) *Table { return c.table(key, path, c.wait) }

// table is Table waiting at most wait.
func (c *Cache) table(key, path string, wait time.Duration) *Table {
	c.mu.Lock()
	e, ok := c.tables.Get(key)
	if ok {
		c.mu.Unlock()
		select {
		case <-e.done:
			return e.t
		default:
		}
		// Being built, perhaps for a lookup that would not wait: wait
		// once, the first lookup that may.
		if wait <= 0 || !e.waiter.CompareAndSwap(false, true) {
			return nil
		}
		return e.await(wait)
	}
	select {
	case c.slots <- struct{}{}:
	default:
		c.mu.Unlock()
		return nil
	}
	e = &entry{done: make(chan struct{})}
	c.tables.Add(key, e)
	c.mu.Unlock()
	go func() {
		defer func() { <-c.slots }()
		e.t, e.err = c.load(path)
		close(e.done)
	}()
	if wait <= 0 || !e.waiter.CompareAndSwap(false, true) {
		return nil
	}
	return e.await(wait)
}

// await waits at most d for the entry's build.
func (e *entry) await(d time.Duration) *Table {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-e.done:
		return e.t
	case <-timer.C:
		return nil
	}
}

// Err returns why the table of key could not be built, or nil.
func (c *Cache) Err(key string) error {
	c.mu.Lock()
	e, ok := c.tables.Peek(key)
	c.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-e.done:
		return e.err
	default:
		return nil
	}
}

// Object is one executable mapping of an object file in a process.
type Object struct {
	Start, Limit uint64 // runtime addresses [Start, Limit)
	Offset       uint64 // the file offset mapped at Start
	// Key and Path are the cache key (build ID) and where the cache's
	// Load finds the object: a file's path, or a name its Load knows
	// (ptrace names the vDSO so, whose table it builds from the
	// profiler's own copy). An empty Path marks code without a table
	// (another ABI's vDSO, anonymous code).
	Key, Path string
	// LeafOnly: the table answers LeafRule alone, and Rule tells of no
	// table there, so walks and chain checks follow the object's frame
	// records but an interrupted frame without one (a leaf, an epilogue)
	// still finds its caller (ptrace's vDSO with --unwind auto).
	LeafOnly bool
}

// Resolver finds the tables of a process's code through a Cache (the
// unwind.Tables of one process), and remembers the rule of each code
// address it was asked about in a small direct-mapped cache: a profile's
// return addresses repeat from sample to sample. Its methods are for one
// goroutine at a time.
type Resolver struct {
	cache *Cache
	objs  []resolved
	// rules is allocated once ruleCacheAfter rules were looked up: a
	// one-off snapshot looks up a few dozen, and 48 KiB of fresh memory
	// costs it more page faults than the lookups.
	rules  *unwind.RuleCache
	misses int
}

// ruleCacheAfter is how many rules a Resolver looks up before it keeps
// them in its rule cache.
const ruleCacheAfter = 256

type resolved struct {
	Object
	t      *Table
	looked bool // t is final: built, or failed
}

// NewResolver returns a resolver over objs (which may overlap: the first
// to start wins).
func NewResolver(cache *Cache, objs []Object) *Resolver {
	r := &Resolver{cache: cache}
	for _, o := range objs {
		if o.Limit > o.Start {
			r.objs = append(r.objs, resolved{Object: o})
		}
	}
	sort.SliceStable(r.objs, func(i, j int) bool { return r.objs[i].Start < r.objs[j].Start })
	return r
}

// Find returns the table of the object mapped at pc, loading it on first
// use (nil when no object is mapped there or its table is not built yet),
// the range of addresses [lo, hi) the answer holds for, and the bias that
// turns them into file offsets (off = pc - bias): unwind.Tables. It
// allocates nothing once the table is built.
func (r *Resolver) Find(pc uint64) (t *Table, lo, hi, bias uint64) {
	return r.find(pc, r.cache.wait)
}

// Rule returns the rule for the code at pc (nil where no built table has
// one) and whether pc's object keeps frame pointers: unwind.Tables. The
// first lookup in an object builds its table (waiting for it as Table
// does). It allocates nothing once the table is built.
func (r *Resolver) Rule(pc uint64) (rule *unwind.Rule, framePointers bool) {
	return r.rule(pc, r.cache.wait)
}

// RuleCache returns the cache of Rule's answers (nil until ruleCacheAfter
// lookups): unwind.Cached, so that a walk finds the rules it holds without
// calling Rule.
func (r *Resolver) RuleCache() *unwind.RuleCache {
	if r == nil {
		return nil
	}
	return r.rules
}

func (r *Resolver) rule(pc uint64, wait time.Duration) (*unwind.Rule, bool) {
	if r == nil {
		return nil, false
	}
	if r.rules != nil {
		if rule, fp, ok := r.rules.Get(pc); ok {
			return rule, fp
		}
	}
	var rule *unwind.Rule
	var fp bool
	if o := r.object(pc); o != nil && o.LeafOnly {
		// No table, as far as Rule tells: remembered as such.
	} else {
		t, _, _, bias := r.tableOf(o, wait)
		if t == nil {
			return nil, false // no object, or its table not built yet: not remembered
		}
		if fp = t.FramePointers(); !fp {
			rule = t.Find(pc - bias)
		}
	}
	if r.rules == nil {
		if r.misses++; r.misses < ruleCacheAfter {
			return rule, fp
		}
		r.rules = new(unwind.RuleCache)
	}
	r.rules.Put(pc, rule, fp)
	return rule, fp
}

// LeafRule returns, for code at pc in an object walked by its frame
// records (one that keeps frame pointers, as Go's, or a LeafOnly one), the
// rule its table gives there (nil when none, or the object has no table
// yet, or is walked by its table): unwind.LeafRules, for the interrupted
// frame, which may not have set up its frame record.
func (r *Resolver) LeafRule(pc uint64) *unwind.Rule {
	return r.leafRule(pc, r.cache.wait)
}

func (r *Resolver) leafRule(pc uint64, wait time.Duration) *unwind.Rule {
	if r == nil {
		return nil
	}
	o := r.object(pc)
	t, _, _, bias := r.tableOf(o, wait)
	if t == nil || !(t.FramePointers() || o.LeafOnly) {
		return nil
	}
	return t.Find(pc - bias)
}

// Warm builds the tables of every object of r, up to maxLoads at once,
// waits for each as Table does, and compiles all the FDEs of those it gets
// (CompileAll), so that walks holding threads stopped need not; an object
// whose table cannot be built, or is not built within the wait, is left
// as it is.
func (r *Resolver) Warm() {
	for i := range r.objs {
		if o := &r.objs[i]; o.Path != "" {
			r.cache.table(o.Key, o.Path, 0) // starts the build
		}
	}
	for i := range r.objs {
		if o := &r.objs[i]; o.Path != "" {
			r.cache.table(o.Key, o.Path, r.cache.wait).CompileAll()
		}
	}
}

// NoWait is a Resolver whose lookups never wait for a table's build: for
// walks that hold a thread stopped.
type NoWait struct{ r *Resolver }

// NoWait returns r as a NoWait.
func (r *Resolver) NoWait() NoWait { return NoWait{r} }

// Rule is Resolver.Rule, except that a table not built yet is not waited
// for: the build goes on, and a later lookup finds it.
func (n NoWait) Rule(pc uint64) (*unwind.Rule, bool) {
	return n.r.rule(pc, 0)
}

// LeafRule is Resolver.LeafRule, not waiting for a table's build.
func (n NoWait) LeafRule(pc uint64) *unwind.Rule { return n.r.leafRule(pc, 0) }

// RuleCache is Resolver.RuleCache: unwind.Cached.
func (n NoWait) RuleCache() *unwind.RuleCache { return n.r.RuleCache() }

// Covers reports whether pc lies in one of the resolver's objects.
func (r *Resolver) Covers(pc uint64) bool { return r.object(pc) != nil }

// object returns the object mapped at pc, or nil.
func (r *Resolver) object(pc uint64) *resolved {
	if r == nil {
		return nil
	}
	objs := r.objs
	i, j := 0, len(objs)
	for i < j {
		m := int(uint(i+j) >> 1)
		if objs[m].Start <= pc {
			i = m + 1
		} else {
			j = m
		}
	}
	if i == 0 || pc >= objs[i-1].Limit {
		return nil
	}
	return &objs[i-1]
}

func (r *Resolver) find(pc uint64, wait time.Duration) (t *Table, lo, hi, bias uint64) {
	return r.tableOf(r.object(pc), wait)
}

// tableOf is find for the object o found at the address (nil: none).
func (r *Resolver) tableOf(o *resolved, wait time.Duration) (t *Table, lo, hi, bias uint64) {
	if o == nil {
		return nil, 0, 0, 0
	}
	if !o.looked && o.Path == "" {
		o.looked = true // no file: no table
	}
	if !o.looked {
		o.t = r.cache.table(o.Key, o.Path, wait)
		if o.t != nil || r.cache.Err(o.Key) != nil {
			o.looked = true
		}
	}
	if o.t == nil {
		// Not built yet: ask again next time.
		return nil, 0, 0, 0
	}
	return o.t, o.Start, o.Limit, o.Start - o.Offset
}

var (
	_ unwind.Tables = (*Resolver)(nil)
	_ unwind.Cached = (*Resolver)(nil)
	_ unwind.Tables = NoWait{}
	_ unwind.Cached = NoWait{}

	_ unwind.LeafRules = (*Resolver)(nil)
	_ unwind.LeafRules = NoWait{}
)
