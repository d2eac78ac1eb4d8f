package symcache

import (
	"slices"

	"github.com/macprof/macprof/images"
)

// A one-off symbolization (a snapshot) knows every address before it
// names any: Expect collects them per object, and the first Symbolize of
// one of them loads a Table holding only the symbols that name them
// (loadELFAt), not the object's whole table. Any other address of the
// object gets the whole table, so answers never depend on Expect.

// expectedTable is the Table loaded for the addresses Expect gave for
// one object before its first Symbolize.
type expectedTable struct {
	entry tableEntry
	offs  []uint64 // sorted file offsets the table answers for
}

// Expect tells c that addr in img will be symbolized (a return address
// when caller), so that the object's first Symbolize reads only the
// symbols its expected addresses need. It applies to ELF objects read by
// the default loader; an address expected after that first Symbolize
// gets the whole table.
func (c *Cache) Expect(img *images.Image, addr uint64, caller bool) {
	if img.Format != images.FormatELF || !c.defaultELF {
		return
	}
	if caller && addr > 0 {
		addr--
	}
	off := img.FileOffset(addr)
	key := img.Key()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, loaded := c.expected[key]; loaded {
		return
	}
	if c.expecting == nil {
		c.expecting = map[string][]uint64{}
	}
	c.expecting[key] = append(c.expecting[key], off)
}

// expectedFor returns the Table loaded for img's expected addresses when
// off is one of them, else nil; the first call for img loads it.
func (c *Cache) expectedFor(img *images.Image, off uint64) (*Table, bool, error) {
	key := img.Key()
	c.mu.Lock()
	e := c.expected[key]
	if e == nil {
		offs := c.expecting[key]
		if offs == nil {
			c.mu.Unlock()
			return nil, false, nil
		}
		delete(c.expecting, key)
		slices.Sort(offs)
		e = &expectedTable{offs: slices.Compact(offs)}
		if c.expected == nil {
			c.expected = map[string]*expectedTable{}
		}
		c.expected[key] = e
	}
	c.mu.Unlock()
	if _, ok := slices.BinarySearch(e.offs, off); !ok {
		return nil, false, nil
	}
	e.entry.once.Do(func() {
		e.entry.table, e.entry.err = c.loadWithin(func(img *images.Image) (*Table, error) { return loadELFAt(img, e.offs) }, img)
	})
	return e.entry.table, true, e.entry.err
}
