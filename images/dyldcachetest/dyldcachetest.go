// Package dyldcachetest lays real Mach-O dylibs out in a fake address space
// the way the dyld shared cache holds them, and writes the cache's main
// file header and .symbols file, for the tests of images and symcache.
// There is no Mac to take a real cache from; the layout follows dyld-1378's
// cache builder and dyld_cache_format.h, cited where it matters.
package dyldcachetest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/internal/fixture"
)

// Where Build places the cache.
const (
	// Base is the cache's unslid base address (its first mapping), where
	// the arm64 macOS caches start.
	Base = 0x180000000
	// Slide is the cache's runtime slide.
	Slide = 0x2a4c000
	// dylibStride separates the dylibs' __TEXT in the cache.
	dylibStride = 0x100000
	// LinkeditAddr is the unslid address of the linkedit region all the
	// dylibs share, and LinkeditFileOff its offset in its subcache file:
	// chosen at the first dylib's __text, inside its __TEXT file range
	// past the load commands, as offsets relative to different subcache
	// files can be.
	LinkeditAddr    = Base + 0x10000000
	LinkeditFileOff = 0x10000 + 0x338
	// Redacted is the name the cache builder gives local symbols in
	// memory (dyld-1378 cache_builder/NewSharedCacheBuilder.cpp: "change
	// __text symbols to "<redacted>" so backtraces don't have bogus
	// names").
	Redacted = "<redacted>"
)

// Local is one local symbol taken out of a dylib into the .symbols file.
type Local struct {
	Name string
	Addr uint64 // unslid address in the cache
}

// Dylib is one dylib laid out by Build.
type Dylib struct {
	// Path is the file given; InstallPath is /usr/lib/ and its base
	// name, the path the cache's image list gives.
	Path, InstallPath string
	// MachO is the rewritten header as the cache holds it.
	MachO *images.MachO
	// Load is the runtime address of its mach_header (its __TEXT).
	Load uint64
	// TextAddr is __TEXT's unslid address; TextAddr-Base is the offset
	// that keys its entry in the .symbols file.
	TextAddr, TextSize uint64
	// Delta was added to every link-time address of the file.
	Delta uint64
	// HeaderSize is the size of its mach_header_64 and load commands.
	HeaderSize uint64
	// Exports are the external function names (without the leading
	// underscore) and Locals the local ones the .symbols file holds.
	Exports map[string]uint64
	Locals  []Local
	// nlists are the dylib's local nlist_64 entries with their names,
	// for the .symbols file.
	localNlists []byte
}

// Cache is a synthetic shared cache in memory.
type Cache struct {
	Mem    *fixture.Memory
	Dylibs []*Dylib
	// Linkedit and Pool are the runtime ranges [lo, hi) of the shared
	// linkedit region and of the string pool inside it.
	Linkedit, Pool [2]uint64
	// UUID is the cache's; SymbolsUUID the .symbols file's.
	UUID, SymbolsUUID [16]byte

	shared *fixture.SharedCache // TaskImage's
}

// TaskImage is dylib i as a task holds it (fixture.NewTask,
// fixture.Task.AddImages): at its load address in the cache's memory,
// listed under its install path. Every TaskImage of c names one
// fixture.SharedCache, so that a task maps the cache once.
func (c *Cache) TaskImage(i int) fixture.TaskImage {
	if c.shared == nil {
		c.shared = &fixture.SharedCache{Mem: c.Mem, UUID: c.UUID, Slide: Slide, Base: Base + Slide}
	}
	d := c.Dylibs[i]
	return fixture.TaskImage{Path: d.InstallPath, Cache: c.shared, Load: d.Load}
}

// Build lays the thin arm64 dylibs at files out as one cache: each dylib's
// segments moved to its place in the cache, with file offsets relative to
// its subcache file; one __LINKEDIT region shared by all, holding each
// dylib's nlists and function starts and one string pool for all of them,
// in which local __text symbols are named "<redacted>"; and the
// MH_DYLIB_IN_CACHE flag set. Every dylib's LC_SYMTAB names the whole pool,
// as in a real cache.
func Build(t testing.TB, files []string) *Cache {
	t.Helper()
	le := binary.LittleEndian
	c := &Cache{Mem: &fixture.Memory{}}
	copy(c.UUID[:], "synthetic-cache!")
	copy(c.SymbolsUUID[:], "synthetic-locals")
	type file struct {
		data []byte
		m    *images.MachO
		st   *images.MachOSymbolTable
		fs   []byte
	}
	var fl []file
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := images.OpenMachO(p, "")
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.ReadSymbolTable(f.R, f.Size)
		if err != nil {
			t.Fatal(err)
		}
		var fs []byte
		if d := f.FunctionStarts; d != nil {
			fs = data[d.DataOff : d.DataOff+d.DataSize]
		}
		fl = append(fl, file{data, f.MachO, st, fs})
		f.Close()
	}
	// The shared linkedit region: every dylib's nlists, then its function
	// starts, then the pool.
	var region []byte
	pool := []byte{0}
	redacted := uint32(len(pool))
	pool = append(pool, Redacted+"\x00"...)
	type place struct{ symoff, nsyms, fsoff, fssize uint32 }
	places := make([]place, len(fl))
	for i, f := range fl {
		d := &Dylib{Path: files[i], InstallPath: "/usr/lib/" + filepath.Base(files[i]), Exports: map[string]uint64{}}
		text := f.m.Text()
		d.TextAddr = Base + 0x10000 + uint64(i)*dylibStride
		d.Delta = d.TextAddr - text.Addr
		d.TextSize = text.Size
		d.Load = d.TextAddr + Slide
		places[i].symoff = uint32(len(region))
		for k := 0; k < f.st.Len(); k++ {
			e := f.st.Entry(k)
			name, _ := f.st.Name(e.Strx)
			ent := make([]byte, 16)
			isText := e.Type&images.NStab == 0 && e.Type&images.NType == images.NSect && e.Sect == 1
			if isText {
				e.Value += d.Delta
			}
			strx := uint32(len(pool))
			switch {
			case isText && e.Type&images.NExt == 0:
				// A local __text symbol: <redacted> in memory, its
				// name in the .symbols file.
				strx = redacted
				loc := make([]byte, 16)
				le.PutUint32(loc, 0) // strx set when the file is written
				loc[4], loc[5] = e.Type, e.Sect
				le.PutUint16(loc[6:], e.Desc)
				le.PutUint64(loc[8:], e.Value)
				d.localNlists = append(d.localNlists, loc...)
				d.Locals = append(d.Locals, Local{Name: name[1:], Addr: e.Value})
			default:
				pool = append(pool, name+"\x00"...)
				if isText && len(name) > 1 {
					d.Exports[name[1:]] = e.Value
				}
			}
			le.PutUint32(ent, strx)
			ent[4], ent[5] = e.Type, e.Sect
			le.PutUint16(ent[6:], e.Desc)
			le.PutUint64(ent[8:], e.Value)
			region = append(region, ent...)
		}
		places[i].nsyms = uint32(f.st.Len())
		places[i].fsoff, places[i].fssize = uint32(len(region)), uint32(len(f.fs))
		region = append(region, f.fs...)
		for len(region)%8 != 0 {
			region = append(region, 0)
		}
		c.Dylibs = append(c.Dylibs, d)
	}
	poolOff := uint32(len(region))
	region = append(region, pool...)
	for i, f := range fl {
		d := c.Dylibs[i]
		data := slices.Clone(f.data)
		rewrite(t, data, d.Delta, LinkeditFileOff, uint64(len(region)), func(cmd uint32, b []byte) {
			switch cmd {
			case 0x2: // LC_SYMTAB
				le.PutUint32(b[8:], LinkeditFileOff+places[i].symoff)
				le.PutUint32(b[12:], places[i].nsyms)
				le.PutUint32(b[16:], LinkeditFileOff+poolOff)
				le.PutUint32(b[20:], uint32(len(pool)))
			case 0x26: // LC_FUNCTION_STARTS
				le.PutUint32(b[8:], LinkeditFileOff+places[i].fsoff)
				le.PutUint32(b[12:], places[i].fssize)
			}
		})
		m, err := images.ParseMachO(data)
		if err != nil {
			t.Fatal(err)
		}
		d.MachO = m
		d.HeaderSize = 32 + uint64(le.Uint32(data[20:]))
		for _, s := range m.Segments {
			if s.Name == "__LINKEDIT" || s.FileSize == 0 {
				continue
			}
			old := f.m.Segment(s.Name)
			c.Mem.Map(s.Addr+Slide, data[old.Offset:old.Offset+old.FileSize])
		}
	}
	c.Mem.Map(LinkeditAddr+Slide, region)
	c.Linkedit = [2]uint64{LinkeditAddr + Slide, LinkeditAddr + Slide + uint64(len(region))}
	c.Pool = [2]uint64{c.Linkedit[0] + uint64(poolOff), c.Linkedit[0] + uint64(poolOff) + uint64(len(pool))}
	return c
}

// rewrite moves the image in data (a thin 64-bit Mach-O) into the cache:
// delta is added to every segment's and section's address and __TEXT's
// file offset becomes its cache offset; __LINKEDIT becomes the shared
// region of size n at fileoff leOff and address LinkeditAddr; fix is
// called on every other load command; the header gets MH_DYLIB_IN_CACHE.
func rewrite(t testing.TB, data []byte, delta, leOff, n uint64, fix func(cmd uint32, b []byte)) {
	t.Helper()
	le := binary.LittleEndian
	le.PutUint32(data[24:], le.Uint32(data[24:])|images.MHDylibInCache)
	ncmds := le.Uint32(data[16:])
	off := uint32(32)
	for i := uint32(0); i < ncmds; i++ {
		cmd, size := le.Uint32(data[off:]), le.Uint32(data[off+4:])
		b := data[off : off+size]
		if cmd == 0x19 { // LC_SEGMENT_64
			name := string(b[8:24])
			if name[:10] == "__LINKEDIT" {
				le.PutUint64(b[24:], LinkeditAddr)
				le.PutUint64(b[32:], n)
				le.PutUint64(b[40:], leOff)
				le.PutUint64(b[48:], n)
			} else {
				addr := le.Uint64(b[24:]) + delta
				le.PutUint64(b[24:], addr)
				// File offsets relative to the subcache file holding
				// the dylib's __TEXT: its cache offset.
				le.PutUint64(b[40:], addr-Base)
				for k := uint32(0); k < le.Uint32(b[64:]); k++ {
					s := b[72+k*80:]
					le.PutUint64(s[32:], le.Uint64(s[32:])+delta)
					le.PutUint32(s[48:], uint32(le.Uint64(s[32:])-Base))
				}
			}
		} else {
			fix(cmd, b)
		}
		off += size
	}
}

// WriteFiles writes the cache's main file (its header and first mapping,
// all the symbolizer reads of it) as dir/dyld_shared_cache_arm64e and its
// local symbols as dir/dyld_shared_cache_arm64e.symbols, whose header has
// UUID symbolsUUID (c.SymbolsUUID for a matching file). It returns the
// main file's path.
func (c *Cache) WriteFiles(t testing.TB, dir string, symbolsUUID [16]byte) string {
	t.Helper()
	main := filepath.Join(dir, "dyld_shared_cache_arm64e")
	if err := os.WriteFile(main, c.MainHeader(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(main+".symbols", c.SymbolsFile(symbolsUUID), 0o644); err != nil {
		t.Fatal(err)
	}
	return main
}

// headerSize is the dyld_cache_header size WriteFiles writes (mappingOffset):
// dyld-1378's struct is 0x228 bytes.
const headerSize = 0x228

func header(uuid [16]byte) []byte {
	h := make([]byte, headerSize+32)
	copy(h, "dyld_v1  arm64e")
	le := binary.LittleEndian
	le.PutUint32(h[16:], headerSize) // mappingOffset
	le.PutUint32(h[20:], 1)          // mappingCount
	copy(h[88:], uuid[:])
	le.PutUint64(h[224:], Base) // sharedRegionStart
	le.PutUint64(h[headerSize:], Base)
	le.PutUint64(h[headerSize+8:], 0x40000000)
	return h
}

// MainHeader returns the main cache file's header and first mapping, with
// symbolFileUUID naming c.SymbolsUUID.
func (c *Cache) MainHeader() []byte {
	h := header(c.UUID)
	copy(h[400:], c.SymbolsUUID[:])
	return h
}

// SymbolsFile returns the .symbols file: a header with UUID uuid, then the
// dyld_cache_local_symbols_info, every dylib's local nlists, their string
// pool and one dyld_cache_local_symbols_entry_64 per dylib.
func (c *Cache) SymbolsFile(uuid [16]byte) []byte {
	le := binary.LittleEndian
	f := header(uuid)
	infoOff := uint64(len(f))
	var nl, strs, ents []byte
	strs = append(strs, 0)
	start := uint32(0)
	for _, d := range c.Dylibs {
		for k, l := range d.Locals {
			e := slices.Clone(d.localNlists[k*16 : k*16+16])
			le.PutUint32(e, uint32(len(strs)))
			strs = append(strs, "_"+l.Name+"\x00"...)
			nl = append(nl, e...)
		}
		ent := make([]byte, 16)
		le.PutUint64(ent, d.TextAddr-Base)
		le.PutUint32(ent[8:], start)
		le.PutUint32(ent[12:], uint32(len(d.Locals)))
		ents = append(ents, ent...)
		start += uint32(len(d.Locals))
	}
	info := make([]byte, 24)
	le.PutUint32(info[0:], 24)
	le.PutUint32(info[4:], uint32(len(nl)/16))
	le.PutUint32(info[8:], uint32(24+len(nl)))
	le.PutUint32(info[12:], uint32(len(strs)))
	le.PutUint32(info[16:], uint32(24+len(nl)+len(strs)))
	le.PutUint32(info[20:], uint32(len(c.Dylibs)))
	body := slices.Concat(info, nl, strs, ents)
	le.PutUint64(f[72:], infoOff)
	le.PutUint64(f[80:], uint64(len(body)))
	return append(f, body...)
}

// Recorder is a MemoryReader that records every read. It is not safe for
// concurrent use.
type Recorder struct {
	R     images.MemoryReader
	Reads [][2]uint64 // [addr, addr+len)
	// OnRead, when set, is called with each read's address and buffer
	// before it is filled.
	OnRead func(addr uint64, dst []byte)
}

// ReadMemory implements images.MemoryReader.
func (r *Recorder) ReadMemory(addr uint64, dst []byte) error {
	r.Reads = append(r.Reads, [2]uint64{addr, addr + uint64(len(dst))})
	if r.OnRead != nil {
		r.OnRead(addr, dst)
	}
	return r.R.ReadMemory(addr, dst)
}

// Touching returns how many reads overlapped [lo, hi).
func (r *Recorder) Touching(lo, hi uint64) int {
	n := 0
	for _, x := range r.Reads {
		if x[0] < hi && lo < x[1] {
			n++
		}
	}
	return n
}

// SubCacheSuffix is the file suffix WriteCache gives its one subcache.
const SubCacheSuffix = ".01"

// WriteCache writes the whole cache as it lies on disk, in the layout of
// dyld-1378 include/mach-o/dyld_cache_format.h: the main file
// dir/dyld_shared_cache_arm64e (a dyld_cache_header with mappingOffset past
// cacheSubType, one mapping covering the file itself, one
// dyld_subcache_entry and a dyld_cache_image_info with path per dylib),
// the subcache dir/dyld_shared_cache_arm64e.01 whose header has UUID
// subUUID and whose mappings hold every region of c.Mem at its unslid
// address (the dylibs and the shared linkedit), and the .symbols file. The
// main file names c.SubUUID(); a different subUUID makes a subcache of
// another cache. It returns the main file's path.
func (c *Cache) WriteCache(t testing.TB, dir string, subUUID [16]byte) string {
	t.Helper()
	le := binary.LittleEndian
	main := filepath.Join(dir, "dyld_shared_cache_arm64e")

	// The subcache: header, mappings, then each region.
	type region struct {
		addr uint64
		data []byte
	}
	var regions []region
	c.Mem.Each(func(addr uint64, data []byte) { regions = append(regions, region{addr - Slide, data}) })
	slices.SortFunc(regions, func(a, b region) int {
		if a.addr < b.addr {
			return -1
		}
		return 1
	})
	sub := make([]byte, headerSize+32*len(regions))
	copy(sub, "dyld_v1  arm64e")
	le.PutUint32(sub[16:], headerSize)
	le.PutUint32(sub[20:], uint32(len(regions)))
	copy(sub[88:], subUUID[:])
	for i, r := range regions {
		for len(sub)%0x1000 != 0 {
			sub = append(sub, 0)
		}
		m := sub[headerSize+32*i:]
		le.PutUint64(m, r.addr)
		le.PutUint64(m[8:], uint64(len(r.data)))
		le.PutUint64(m[16:], uint64(len(sub)))
		le.PutUint32(m[24:], 5) // maxProt
		le.PutUint32(m[28:], 5) // initProt
		sub = append(sub, r.data...)
	}

	// The main file: header, its mapping, the subcache entry, the image
	// list, the paths.
	const (
		mappingAt  = headerSize
		subArrayAt = mappingAt + 32
		imagesAt   = subArrayAt + 56
	)
	pathsAt := imagesAt + 32*len(c.Dylibs)
	f := make([]byte, pathsAt)
	copy(f, "dyld_v1  arm64e")
	le.PutUint32(f[16:], headerSize) // mappingOffset
	le.PutUint32(f[20:], 1)          // mappingCount
	copy(f[88:], c.UUID[:])
	le.PutUint64(f[224:], Base)                  // sharedRegionStart
	le.PutUint32(f[392:], subArrayAt)            // subCacheArrayOffset
	le.PutUint32(f[396:], 1)                     // subCacheArrayCount
	copy(f[400:], c.SymbolsUUID[:])              // symbolFileUUID
	le.PutUint32(f[448:], imagesAt)              // imagesOffset
	le.PutUint32(f[452:], uint32(len(c.Dylibs))) // imagesCount
	le.PutUint32(f[456:], 1)                     // cacheSubType
	e := f[subArrayAt:]
	su := c.SubUUID()
	copy(e, su[:])
	le.PutUint64(e[16:], regions[0].addr-Base) // cacheVMOffset
	copy(e[24:], SubCacheSuffix)
	for i, d := range c.Dylibs {
		im := f[imagesAt+32*i:]
		le.PutUint64(im, d.TextAddr)
		le.PutUint32(im[24:], uint32(len(f)))
		f = append(f, d.InstallPath+"\x00"...)
	}
	m := f[mappingAt:]
	le.PutUint64(m, Base)
	le.PutUint64(m[8:], uint64(len(f)))
	le.PutUint64(m[16:], 0)
	if uint64(len(f)) > regions[0].addr-Base {
		t.Fatalf("main file of %d bytes overlaps the first dylib", len(f))
	}
	for name, b := range map[string][]byte{
		main:                  f,
		main + SubCacheSuffix: sub,
		main + ".symbols":     c.SymbolsFile(c.SymbolsUUID),
	} {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return main
}

// SubUUID is the UUID the main file WriteCache writes names for its
// subcache.
func (c *Cache) SubUUID() [16]byte {
	var u [16]byte
	copy(u[:], "synthetic-sub-01")
	return u
}
