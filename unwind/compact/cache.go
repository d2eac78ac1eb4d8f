package compact

import (
	"container/list"
	"sync"
	"unsafe"

	"github.com/macprof/macprof/unwind"
)

// Cache keeps compiled tables by image key (the Mach-O UUID), so that an
// image loaded in many processes, or loaded again, is parsed once. It is
// bounded by the tables' size and drops the least recently used first.
// Failures are kept too, so an image without __unwind_info is not read
// again. It is safe for concurrent use.
type Cache struct {
	mu       sync.Mutex
	maxBytes int64
	used     int64
	lru      *list.List // of *cacheEntry, most recent first
	byKey    map[string]*list.Element
}

type cacheEntry struct {
	key   string
	table *Table
	err   error
	size  int64
}

// NewCache returns a cache holding tables of at most maxBytes in all.
func NewCache(maxBytes int64) *Cache {
	return &Cache{maxBytes: maxBytes, lru: list.New(), byKey: map[string]*list.Element{}}
}

// Bytes returns the memory a table holds.
func (t *Table) Bytes() int64 {
	return int64(4*len(t.starts)+2*len(t.rule)+t.eh.Bytes()) + int64(len(t.rules))*int64(unsafe.Sizeof(Decoded{})+unsafe.Sizeof(unwind.Rule{})) + 64
}

// Get returns the table of key, building it with build when the cache has
// none. An empty key is never cached.
func (c *Cache) Get(key string, build func() (*Table, error)) (*Table, error) {
	if key == "" {
		return build()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(e)
		ce := e.Value.(*cacheEntry)
		return ce.table, ce.err
	}
	t, err := build()
	ce := &cacheEntry{key: key, table: t, err: err, size: 64}
	if t != nil {
		ce.size = t.Bytes()
	}
	c.byKey[key] = c.lru.PushFront(ce)
	c.used += ce.size
	for c.used > c.maxBytes && c.lru.Len() > 1 {
		old := c.lru.Back()
		oe := old.Value.(*cacheEntry)
		c.lru.Remove(old)
		delete(c.byKey, oe.key)
		c.used -= oe.size
	}
	return t, err
}

// Lookup returns the table of key if the cache holds it, without
// building it.
func (c *Cache) Lookup(key string) (*Table, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok || key == "" {
		return nil, false
	}
	c.lru.MoveToFront(e)
	t := e.Value.(*cacheEntry).table
	return t, t != nil
}

// Len returns the number of images cached, failures included, and the
// bytes their tables hold.
func (c *Cache) Len() (n int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.used
}
