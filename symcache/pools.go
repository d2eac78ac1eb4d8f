package symcache

import (
	"sync"
	"time"

	"github.com/macprof/macprof/images"
)

// DefaultPoolIdle is how long a pool no image has asked for is kept: the
// tables of a task's cached dylibs are built in a burst when its first
// samples are symbolized, and the pool is not needed after.
const DefaultPoolIdle = 30 * time.Second

// DefaultPoolBytes is the default bound of a StringPools: a macOS 15
// subcache's shared string pool is tens of MB, and a task maps a few.
const DefaultPoolBytes = 256 << 20

// StringPools caches the string tables that images in one task's memory
// share, keyed by task (the images.MemoryReader) and the pool's address and
// size: every dylib of a dyld shared cache subcache has LC_SYMTAB name the
// same pool, so it is read once per task, not once per image. Tables built
// from a pool copy the names they keep, so a pool lives only while it is
// cached here. The bound is on the bytes held; the least recently used
// pools go first, a pool larger than the bound is read but not kept, and a
// pool idle for DefaultPoolIdle is dropped at the next request. An entry
// holds its reader (the task) until dropped. It is safe for concurrent
// use.
type StringPools struct {
	max  int64
	idle time.Duration
	now  func() time.Time

	mu    sync.Mutex
	used  int64
	tick  uint64
	pools map[poolKey]*poolEntry
	// reads counts pool reads, for tests.
	reads int
}

type poolKey struct {
	mem        images.MemoryReader
	addr, size uint64
}

type poolEntry struct {
	once sync.Once
	data []byte
	err  error
	used uint64    // tick of the last use
	last time.Time // time of the last use
	held bool      // counted in used bytes
}

// NewStringPools returns an empty cache holding at most maxBytes of pools
// (DefaultPoolBytes when maxBytes <= 0).
func NewStringPools(maxBytes int64) *StringPools {
	if maxBytes <= 0 {
		maxBytes = DefaultPoolBytes
	}
	return &StringPools{max: maxBytes, idle: DefaultPoolIdle, now: time.Now, pools: map[poolKey]*poolEntry{}}
}

// get returns the size-byte pool at addr in mem's task, calling read for
// it the first time. The bytes must not be modified or kept.
func (p *StringPools) get(mem images.MemoryReader, addr, size uint64, read func() ([]byte, error)) ([]byte, error) {
	k := poolKey{mem, addr, size}
	p.mu.Lock()
	now := p.now()
	p.dropIdle(now)
	e := p.pools[k]
	if e == nil {
		e = &poolEntry{}
		p.pools[k] = e
	}
	p.tick++
	e.used, e.last = p.tick, now
	p.mu.Unlock()
	e.once.Do(func() {
		e.data, e.err = read()
		p.mu.Lock()
		defer p.mu.Unlock()
		p.reads++
		if e.err != nil || int64(len(e.data)) > p.max {
			// Not kept: a failed read is retried with the next image.
			if p.pools[k] == e {
				delete(p.pools, k)
			}
			return
		}
		e.held = true
		p.used += int64(len(e.data))
		p.evict(e)
	})
	return e.data, e.err
}

// evict drops the least recently used held pools, never keep, until the
// bytes held fit the bound. p.mu is held.
func (p *StringPools) evict(keep *poolEntry) {
	for p.used > p.max {
		var oldK poolKey
		var old *poolEntry
		for k, e := range p.pools {
			if e.held && e != keep && (old == nil || e.used < old.used) {
				oldK, old = k, e
			}
		}
		if old == nil {
			return
		}
		delete(p.pools, oldK)
		p.used -= int64(len(old.data))
	}
}

// dropIdle drops the held pools unused since before now-p.idle. p.mu is
// held.
func (p *StringPools) dropIdle(now time.Time) {
	for k, e := range p.pools {
		if e.held && now.Sub(e.last) > p.idle {
			delete(p.pools, k)
			p.used -= int64(len(e.data))
		}
	}
}

// Purge drops every pool.
func (p *StringPools) Purge() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.pools)
	p.used = 0
}

// Held returns the number of pools and bytes held.
func (p *StringPools) Held() (pools int, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.pools {
		if e.held {
			pools++
		}
	}
	return pools, p.used
}
