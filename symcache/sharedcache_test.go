package symcache_test

import (
	"encoding/hex"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/images/dyldcachetest"
	"github.com/macprof/macprof/symcache"
)

// cacheDylibs are the real dylibs the synthetic shared cache holds: both
// have local functions, and their string tables become one pool.
var cacheDylibs = []string{"libdemo_arm64.dylib", "libtwo_arm64.dylib"}

func buildCache(t *testing.T) *dyldcachetest.Cache {
	t.Helper()
	files := make([]string, len(cacheDylibs))
	for i, n := range cacheDylibs {
		files[i] = symcache.Fixture(n)
	}
	return dyldcachetest.Build(t, files)
}

// cacheImages returns the images of c's dylibs, read through mem, as
// DyldImages makes them (SharedCache set to the cache's UUID).
func cacheImages(t *testing.T, c *dyldcachetest.Cache, mem images.MemoryReader) []*images.Image {
	t.Helper()
	var out []*images.Image
	for _, d := range c.Dylibs {
		img, err := images.MachOImageFromMemory(mem, d.Load, "/usr/lib/"+cacheDylibs[len(out)])
		if err != nil {
			t.Fatal(err)
		}
		img.SharedCache = hex.EncodeToString(c.UUID[:])
		out = append(out, img)
	}
	return out
}

// checkCacheNames symbolizes every export and every local function of
// c's dylibs: exports must have their names; locals their real names
// when named is true, else image+0xADDR (unslid), never "<redacted>".
func checkCacheNames(t *testing.T, c *dyldcachetest.Cache, cache *symcache.Cache, imgs []*images.Image, named bool) {
	t.Helper()
	for i, d := range c.Dylibs {
		img := imgs[i]
		if len(d.Exports) == 0 || len(d.Locals) == 0 {
			t.Fatalf("%s: %d exports, %d locals: the fixture must have both", img.Path, len(d.Exports), len(d.Locals))
		}
		for name, addr := range d.Exports {
			pc := addr + dyldcachetest.Slide
			if fr := cache.Symbolize(img, pc, false); fr[0].Function != name {
				t.Errorf("%s: export at %#x named %q (%s), want %q", img.Name(), pc, fr[0].Function, fr[0].Name(), name)
			}
		}
		for _, l := range d.Locals {
			pc := l.Addr + dyldcachetest.Slide
			fr := cache.Symbolize(img, pc, false)
			want := fmt.Sprintf("%s+0x%x", img.Name(), l.Addr) // its unslid address
			if named {
				want = l.Name
			}
			if got := fr[0].Name(); got != want {
				t.Errorf("%s: local %s at %#x named %q, want %q", img.Name(), l.Name, pc, got, want)
			}
		}
	}
}

// checkNoTextRead fails if any read of rec fell in a dylib's __TEXT past
// its header and load commands: the symbol tables are in __LINKEDIT only.
func checkNoTextRead(t *testing.T, c *dyldcachetest.Cache, rec *dyldcachetest.Recorder) {
	t.Helper()
	for _, d := range c.Dylibs {
		cmdsEnd := d.Load + d.HeaderSize
		if n := rec.Touching(cmdsEnd, d.Load+d.TextSize); n > 0 {
			t.Errorf("%d reads of __TEXT [%#x, %#x) beyond the load commands", n, cmdsEnd, d.Load+d.TextSize)
		}
	}
}

// TestSharedCacheLayout symbolizes two dylibs laid out as in the dyld
// shared cache (__LINKEDIT's file offsets relative to another subcache
// file than __TEXT's, one string pool, locals "<redacted>") through the
// default Cache, with no .symbols file: exports are named, locals are
// image+0xOFFSET, and no __TEXT byte is read as a symbol table. Before
// LinkeditMemory, the first dylib's symtab offset fell in its __TEXT's
// file range and its names came out of its code.
func TestSharedCacheLayout(t *testing.T) {
	c := buildCache(t)
	rec := &dyldcachetest.Recorder{R: c.Mem}
	imgs := cacheImages(t, c, rec)
	cache := symcache.New(symcache.Options{})
	checkCacheNames(t, c, cache, imgs, false)
	checkNoTextRead(t, c, rec)
}

// TestSharedCachePoolReadOnce loads both dylibs' tables: the string pool
// their LC_SYMTABs share is read from the task once, and once the pool
// cache lets it go no table keeps it alive.
func TestSharedCachePoolReadOnce(t *testing.T) {
	c := buildCache(t)
	var poolFreed atomic.Bool
	rec := &dyldcachetest.Recorder{R: c.Mem, OnRead: func(addr uint64, dst []byte) {
		if addr == c.Pool[0] && len(dst) > 0 {
			runtime.AddCleanup(&dst[0], func(*atomic.Bool) { poolFreed.Store(true) }, &poolFreed)
		}
	}}
	imgs := cacheImages(t, c, rec)
	pools := symcache.NewStringPools(1 << 20)
	cache := symcache.New(symcache.Options{Loaders: map[images.Format]symcache.Loader{
		images.FormatMachO: symcache.MachOLoader(symcache.MachOOptions{Pools: pools, SharedCacheDirs: []string{}}),
	}})
	checkCacheNames(t, c, cache, imgs, false)
	if n := rec.Touching(c.Pool[0], c.Pool[1]); n != 1 {
		t.Errorf("string pool [%#x, %#x) read %d times, want once for %d images", c.Pool[0], c.Pool[1], n, len(imgs))
	}
	if n, b := pools.Held(); n != 1 || b != int64(c.Pool[1]-c.Pool[0]) {
		t.Errorf("pools hold %d pools, %d bytes; want 1 of %d", n, b, c.Pool[1]-c.Pool[0])
	}
	checkNoTextRead(t, c, rec)

	pools.Purge()
	for i := 0; i < 20 && !poolFreed.Load(); i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if !poolFreed.Load() {
		t.Error("the string pool is still reachable with only the tables holding names from it")
	}
	// The tables still name every function.
	for _, img := range imgs {
		if _, err := cache.Table(img); err != nil {
			t.Fatal(err)
		}
	}
	checkCacheNames(t, c, cache, imgs, false)
	runtime.KeepAlive(cache)
}

// TestStringPoolsBound checks that the pools held stay within the bound:
// a pool larger than it is read for the image but not kept.
func TestStringPoolsBound(t *testing.T) {
	c := buildCache(t)
	rec := &dyldcachetest.Recorder{R: c.Mem}
	imgs := cacheImages(t, c, rec)
	pools := symcache.NewStringPools(int64(c.Pool[1]-c.Pool[0]) - 1)
	load := symcache.MachOLoader(symcache.MachOOptions{Pools: pools, SharedCacheDirs: []string{}})
	for _, img := range imgs {
		if _, err := load(img); err != nil {
			t.Fatal(err)
		}
	}
	if n, b := pools.Held(); n != 0 || b != 0 {
		t.Errorf("pools hold %d pools, %d bytes over a bound smaller than the pool", n, b)
	}
	if n := rec.Touching(c.Pool[0], c.Pool[1]); n != len(imgs) {
		t.Errorf("pool read %d times without caching, want %d", n, len(imgs))
	}
}

// TestSharedCacheLocalsFromSymbolsFile names the "<redacted>" locals from
// the cache's .symbols file, found by the cache's UUID in a directory;
// with a .symbols file of another UUID, or none, locals fall back to
// image+0xOFFSET while exports keep their names.
func TestSharedCacheLocalsFromSymbolsFile(t *testing.T) {
	c := buildCache(t)
	for _, tc := range []struct {
		name  string
		uuid  [16]byte
		write bool
		named bool
	}{
		{"matching", c.SymbolsUUID, true, true},
		{"mismatched", [16]byte{15: 1}, true, false},
		{"absent", c.SymbolsUUID, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.write {
				c.WriteFiles(t, dir, tc.uuid)
			}
			cache := symcache.New(symcache.Options{Loaders: map[images.Format]symcache.Loader{
				images.FormatMachO: symcache.MachOLoader(symcache.MachOOptions{Pools: symcache.NewStringPools(0), SharedCacheDirs: []string{dir}}),
			}})
			rec := &dyldcachetest.Recorder{R: c.Mem}
			checkCacheNames(t, c, cache, cacheImages(t, c, rec), tc.named)
			checkNoTextRead(t, c, rec)
		})
	}
}

// TestStringPoolsIdle checks that a pool no image asked for during the
// idle time is dropped at the next request, and read again when needed.
func TestStringPoolsIdle(t *testing.T) {
	c := buildCache(t)
	rec := &dyldcachetest.Recorder{R: c.Mem}
	imgs := cacheImages(t, c, rec)
	pools := symcache.NewStringPools(0)
	now := time.Unix(1e9, 0)
	symcache.SetPoolClock(pools, func() time.Time { return now }, time.Minute)
	load := symcache.MachOLoader(symcache.MachOOptions{Pools: pools, SharedCacheDirs: []string{}})
	for _, img := range imgs {
		if _, err := load(img); err != nil {
			t.Fatal(err)
		}
		now = now.Add(50 * time.Second) // within the idle time of the last use
	}
	if n := rec.Touching(c.Pool[0], c.Pool[1]); n != 1 {
		t.Fatalf("pool read %d times within the idle time", n)
	}
	now = now.Add(2 * time.Minute)
	if _, err := load(imgs[0]); err != nil {
		t.Fatal(err)
	}
	if n := rec.Touching(c.Pool[0], c.Pool[1]); n != 2 {
		t.Errorf("pool read %d times after going idle, want 2", n)
	}
	if n, b := pools.Held(); n != 1 || b != int64(c.Pool[1]-c.Pool[0]) {
		t.Errorf("pools hold %d pools, %d bytes after the idle one was dropped", n, b)
	}
}
