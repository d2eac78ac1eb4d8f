package symcache

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/macprof/macprof/demangle"
	"github.com/macprof/macprof/images"
)

// Loader builds the Table of the object file behind an image.
type Loader func(img *images.Image) (*Table, error)

// Options bounds a Cache.
type Options struct {
	// MaxTables bounds how many object tables stay loaded (default 256).
	MaxTables int
	// MaxFrames bounds the frame cache (default 1<<18 entries).
	MaxFrames int
	// Loaders overrides the loader per format; nil entries use the defaults.
	Loaders map[images.Format]Loader
	// LoadTimeout bounds how long Table waits for one object's table
	// (default DefaultLoadTimeout); past it the object stays unsymbolized.
	LoadTimeout time.Duration
	// FullNames demangles names in full (as swift demangle and c++filt
	// print them) instead of the simplified form profiles show.
	FullNames bool
	// NoLines names functions only: no file:line and no inlined calls,
	// so that no object's DWARF or Go line table is ever read (what a
	// one-off snapshot spends most of its time on otherwise).
	NoLines bool
	// NoDWARFLines takes file:line and inlined calls from Go's line
	// tables only and never reads DWARF, whose decompression and parsing
	// cost a continuous profiler more CPU than minutes of sampling
	// (libc's debug file: about 150 ms); frames there are named by symbol.
	NoDWARFLines bool
}

// DefaultLoadTimeout is the default Options.LoadTimeout: a file a target
// serves from a FUSE mount, or one on a hung disk, can make a read last for
// ever, and the agent symbolizes every target's windows on one goroutine.
const DefaultLoadTimeout = 10 * time.Second

// Cache symbolizes addresses, loading each object's table once and caching
// every symbolized frame. It is safe for concurrent use.
type Cache struct {
	form        demangle.Form
	noLines     bool
	noDWARF     bool
	loaders     map[images.Format]Loader
	loadTimeout time.Duration

	mu     sync.Mutex
	tables *lru.Cache[string, *tableEntry]
	frames *lru.Cache[frameKey, []Frame]
	// hot is a small two-way, lock-free cache in front of frames: a hit
	// costs a hash, atomic loads and key comparisons, no lock and no
	// allocation. It is allocated once hotAfter frames were looked up
	// outside it: a one-off snapshot symbolizes a few dozen, and 128 KiB
	// of fresh memory costs it more page faults than the lookups.
	hot    atomic.Pointer[[hotSlots]atomic.Pointer[hotFrame]]
	missed atomic.Int64 // lookups while hot is nil

	// defaultELF tells that ELF objects are read by LoadELF, so that
	// Expect's tables (loadELFAt) answer as it does.
	defaultELF bool
	// expecting holds Expect's file offsets per object key until the
	// object's first Symbolize moves them to expected; both under mu.
	expecting map[string][]uint64
	expected  map[string]*expectedTable
}

// hotSlots is the size of Cache.hot (a power of two).
const hotSlots = 1 << 14

// hotAfter is how many lookups a Cache makes before it allocates hot.
const hotAfter = 1024

type hotFrame struct {
	key    frameKey
	frames []Frame
}

type tableEntry struct {
	once  sync.Once
	table *Table
	err   error
}

// frameKey identifies a frame: the object by build ID, or by path when it
// has none (so that no key string is built per lookup), and the offset.
type frameKey struct {
	build string
	path  string
	addr  uint64 // file offset looked up
}

func (k *frameKey) slot() uint64 {
	h := k.addr
	b := k.build
	if len(b) >= 8 {
		h ^= uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	} else {
		h ^= uint64(len(k.path))
	}
	return (h * 0x9e3779b97f4a7c15) >> (64 - 14) // hotSlots == 1<<14
}

// New returns an empty Cache.
func New(opts Options) *Cache {
	if opts.MaxTables <= 0 {
		opts.MaxTables = 256
	}
	if opts.MaxFrames <= 0 {
		opts.MaxFrames = 1 << 18
	}
	if opts.LoadTimeout <= 0 {
		opts.LoadTimeout = DefaultLoadTimeout
	}
	form := demangle.Simplified
	if opts.FullNames {
		form = demangle.Full
	}
	c := &Cache{form: form, noLines: opts.NoLines, noDWARF: opts.NoDWARFLines, loadTimeout: opts.LoadTimeout, loaders: map[images.Format]Loader{
		images.FormatELF: LoadELF,
		// One loader per Cache: the string pools of the dyld shared
		// cache and its local symbols are shared by the images it loads.
		images.FormatMachO: MachOLoader(MachOOptions{Pools: NewStringPools(0)}),
	}}
	c.defaultELF = opts.Loaders[images.FormatELF] == nil
	for f, l := range opts.Loaders {
		if l != nil {
			c.loaders[f] = l
		}
	}
	c.tables, _ = lru.New[string, *tableEntry](opts.MaxTables)
	c.frames, _ = lru.New[frameKey, []Frame](opts.MaxFrames)
	return c
}

// Table returns the symbol table of img's object file, loading it on first
// use. A failed load is remembered: it is not retried while cached.
func (c *Cache) Table(img *images.Image) (*Table, error) {
	key := img.Key()
	c.mu.Lock()
	e, ok := c.tables.Get(key)
	if !ok {
		e = &tableEntry{}
		c.tables.Add(key, e)
	}
	c.mu.Unlock()
	e.once.Do(func() {
		load := c.loaders[img.Format]
		if load == nil {
			e.err = fmt.Errorf("symcache: %s: no loader for format %v", img.Path, img.Format)
			return
		}
		e.table, e.err = c.loadWithin(load, img)
	})
	return e.table, e.err
}

// loadWithin runs load on a goroutine of its own and waits for it at most
// the cache's load timeout; a load still running then is left to finish
// alone, and its object stays unsymbolized.
func (c *Cache) loadWithin(load Loader, img *images.Image) (*Table, error) {
	type result struct {
		t   *Table
		err error
	}
	done := make(chan result, 1)
	go func() {
		t, err := load(img)
		done <- result{t, err}
	}()
	timer := time.NewTimer(c.loadTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.t, r.err
	case <-timer.C:
		return nil, fmt.Errorf("symcache: %s: reading its symbols took longer than %v", img.File(), c.loadTimeout)
	}
}

// Symbolize returns the frames for addr inside img, innermost first (more
// than one when debug info records inlined calls). caller tells that addr is
// a return address, so the call instruction before it is looked up. When
// symbols are missing the single frame has an empty Function and, as
// Frame.Name prints it, the link-time address (or, without the object's
// table, the offset in the image).
func (c *Cache) Symbolize(img *images.Image, addr uint64, caller bool) []Frame {
	if caller && addr > 0 {
		addr--
	}
	off := img.FileOffset(addr)
	key := frameKey{build: img.BuildID, addr: off}
	if key.build == "" {
		key.path = img.File()
	}
	hot := c.hot.Load()
	if hot == nil {
		if c.missed.Add(1) == hotAfter {
			c.hot.Store(new([hotSlots]atomic.Pointer[hotFrame]))
		}
		return c.frame(img, key)
	}
	// Two-way: the key may sit in its slot or the slot's neighbour.
	i := key.slot()
	a, b := &hot[i], &hot[i^1]
	ha, hb := a.Load(), b.Load()
	if ha != nil && ha.key == key {
		return ha.frames
	}
	if hb != nil && hb.key == key {
		return hb.frames
	}
	frames := c.frame(img, key)
	if ha != nil && hb == nil {
		a = b
	}
	a.Store(&hotFrame{key: key, frames: frames})
	return frames
}

// frame returns the frames of key, in img, from the frame cache or
// resolved and cached.
func (c *Cache) frame(img *images.Image, key frameKey) []Frame {
	frames, ok := c.frames.Get(key)
	if !ok {
		frames = c.resolve(img, key.addr)
		c.frames.Add(key, frames)
	}
	return frames
}

func (c *Cache) resolve(img *images.Image, off uint64) []Frame {
	unknown := []Frame{{Image: img.Name(), Offset: off}}
	t, ok, err := c.expectedFor(img, off)
	if !ok {
		t, err = c.Table(img)
	}
	if err != nil || t == nil {
		return unknown
	}
	vaddr, ok := t.Address(off)
	if !ok {
		return unknown
	}
	name, start, ok := t.Lookup(vaddr)
	if !ok {
		// No function: the frame is named by its link-time address.
		return []Frame{{Image: img.Name(), Offset: vaddr, Linked: true}}
	}
	if name == "" {
		// An anonymous function start (LC_FUNCTION_STARTS, .eh_frame):
		// the frame is named by the function's link-time start, so
		// that every address of the function shares one name, the
		// one addr2line and atos take.
		return []Frame{{Image: img.Name(), Anonymous: true, Start: start, Offset: vaddr - start}}
	}
	// Tables keep names mangled, so that building a table costs no
	// demangling: demangle each frame once, here.
	name = demangle.Name(name, c.form)
	if t.lines != nil && !c.noLines && !(c.noDWARF && readsDWARF(t.lines)) {
		if fs := t.lines.Lines(vaddr); len(fs) > 0 {
			out := make([]Frame, len(fs))
			for i, f := range fs {
				f.Image = img.Name()
				if f.Function == "" {
					f.Function = name
				} else {
					f.Function = demangle.Name(f.Function, c.form)
				}
				out[i] = f
			}
			last := &out[len(out)-1]
			last.Offset = vaddr - start
			return out
		}
	}
	return []Frame{{Function: name, Offset: vaddr - start, Image: img.Name()}}
}
