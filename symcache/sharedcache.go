package symcache

import (
	hexpkg "encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/macprof/macprof/images"
)

// DefaultSharedCacheDirs are where macOS keeps the dyld shared cache: the
// OS cryptex (macOS 13 and later) and the older system directory, from
// the list dyld-1378 common/ProcessAtlas.cpp
// SharedCache::forEachInstalledCacheWithSystemPath searches (and
// MACOSX_MRM_DYLD_SHARED_CACHE_DIR in include/mach-o/dyld_cache_format.h).
var DefaultSharedCacheDirs = []string{
	"/System/Volumes/Preboot/Cryptexes/OS/System/Library/dyld",
	"/System/Cryptexes/OS/System/Library/dyld",
	"/System/Library/dyld",
}

// cacheLocals finds and keeps open the local symbols of the dyld shared
// caches that images belong to, one per cache UUID.
type cacheLocals struct {
	dirs []string

	mu     sync.Mutex
	caches map[string]*cacheLocalsEntry
	disk   map[string]*diskCacheEntry
}

type cacheLocalsEntry struct {
	once   sync.Once
	base   uint64 // the cache's unslid base address
	locals *images.DyldLocalSymbols
	err    error
}

func newCacheLocals(dirs []string) *cacheLocals {
	return &cacheLocals{dirs: dirs, caches: map[string]*cacheLocalsEntry{}, disk: map[string]*diskCacheEntry{}}
}

// maxSharedCaches bounds the caches looked up: a machine has one per
// architecture and platform (native, Rosetta, DriverKit).
const maxSharedCaches = 8

// symbols returns the local symbols of m, a dylib of the shared cache whose
// UUID is uuid (lowercase hex).
func (c *cacheLocals) symbols(uuid string, m *images.MachO) (*images.MachOSymbolTable, error) {
	if len(c.dirs) == 0 {
		return nil, errors.New("symcache: no shared cache directories to search")
	}
	c.mu.Lock()
	e := c.caches[uuid]
	if e == nil {
		if len(c.caches) >= maxSharedCaches {
			c.mu.Unlock()
			return nil, fmt.Errorf("symcache: more than %d shared caches looked up", maxSharedCaches)
		}
		e = &cacheLocalsEntry{}
		c.caches[uuid] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.base, e.locals, e.err = openCacheLocals(c.dirs, uuid) })
	if e.err != nil {
		return nil, e.err
	}
	text := m.Text()
	if text == nil || text.Addr < e.base {
		return nil, fmt.Errorf("symcache: image is not inside shared cache %s", uuid)
	}
	return e.locals.Symbols(text.Addr - e.base)
}

// openCacheLocals finds the main file of the shared cache with the given
// UUID in dirs and opens its local symbols: the .symbols file beside it
// that its header's symbolFileUUID names (without a ".development"
// suffix, as dyld-1378 common/ProcessAtlas.cpp SharedCache::localSymbols
// builds the path), or, for a cache older than the .symbols file, the main
// file itself. The file stays open for the process's life.
func openCacheLocals(dirs []string, uuid string) (uint64, *images.DyldLocalSymbols, error) {
	path, h, err := findMainCache(dirs, uuid)
	if err != nil {
		return 0, nil, err
	}
	symPath, symUUID := path, h.UUID
	if h.SymbolFileUUID != ([16]byte{}) {
		stem, _ := strings.CutSuffix(path, ".development")
		symPath, symUUID = stem+".symbols", h.SymbolFileUUID
	}
	l, err := openLocals(symPath, symUUID)
	if err != nil {
		return 0, nil, fmt.Errorf("symcache: shared cache %s: %w", path, err)
	}
	return h.BaseAddress, l, nil
}

// findMainCache returns the path and header of the main file of the
// shared cache with the given UUID (lowercase hex) in dirs.
func findMainCache(dirs []string, uuid string) (string, *images.DyldCacheHeader, error) {
	want, err := hexpkg.DecodeString(uuid)
	if err != nil || len(want) != 16 {
		return "", nil, fmt.Errorf("symcache: shared cache UUID %q is not 16 hex bytes", uuid)
	}
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, ent := range ents {
			name := ent.Name()
			// Main files: dyld_shared_cache_<arch>[.development];
			// subcaches, .symbols, .map and .atlas have another suffix.
			if !strings.HasPrefix(name, "dyld_shared_cache_") || !ent.Type().IsRegular() {
				continue
			}
			stem, _ := strings.CutSuffix(name, ".development")
			if strings.Contains(stem, ".") {
				continue
			}
			path := filepath.Join(dir, name)
			h, err := readCacheHeader(path)
			if err != nil || string(h.UUID[:]) != string(want) {
				continue
			}
			return path, h, nil
		}
	}
	return "", nil, fmt.Errorf("symcache: no shared cache with UUID %s in %s", uuid, strings.Join(dirs, ", "))
}

func readCacheHeader(path string) (*images.DyldCacheHeader, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return images.ReadDyldCacheHeader(f)
}

// openLocals opens the local symbols in the file at path, whose header
// must have UUID want, and keeps the file open.
func openLocals(path string, want [16]byte) (*images.DyldLocalSymbols, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	l, err := images.OpenDyldLocalSymbols(f, size, want)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// openRegular opens path only if it is a regular file (not a FIFO, which
// would block the open, nor a device), returning it and its size.
func openRegular(path string) (*os.File, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	fst, err := f.Stat()
	if err != nil || !os.SameFile(st, fst) {
		f.Close()
		return nil, 0, fmt.Errorf("%s changed while it was opened", path)
	}
	return f, fst.Size(), nil
}

// diskCache returns the shared cache with the given UUID (lowercase hex)
// as its files in c.dirs hold it, opened once and kept open.
func (c *cacheLocals) diskCache(uuid string) (*images.DyldCache, error) {
	if len(c.dirs) == 0 {
		return nil, errors.New("symcache: no shared cache directories to search")
	}
	c.mu.Lock()
	e := c.disk[uuid]
	if e == nil {
		if len(c.disk) >= maxSharedCaches {
			c.mu.Unlock()
			return nil, fmt.Errorf("symcache: more than %d shared caches opened", maxSharedCaches)
		}
		e = &diskCacheEntry{}
		c.disk[uuid] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.cache, e.err = openDiskCache(c.dirs, uuid) })
	return e.cache, e.err
}

type diskCacheEntry struct {
	once  sync.Once
	cache *images.DyldCache
	err   error
}

// openDiskCache opens the main file of the shared cache with the given
// UUID in dirs and its subcaches beside it, named as dyld-1378
// common/DyldSharedCache.cpp DyldSharedCache::mapCacheFiles names them:
// the main path without ".development" and the entry's file suffix, or
// the main path and ".N" for an old entry without one. The files stay
// open for the process's life; on an error every one is closed.
func openDiskCache(dirs []string, uuid string) (*images.DyldCache, error) {
	path, h, err := findMainCache(dirs, uuid)
	if err != nil {
		return nil, err
	}
	var opened []*os.File
	closeAll := func() {
		for _, f := range opened {
			f.Close()
		}
	}
	main, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	opened = append(opened, main)
	base := path
	if h.SubCacheEntryV2 {
		base, _ = strings.CutSuffix(path, ".development")
	}
	c, err := images.OpenDyldCache(main, size, func(suffix string) (io.ReaderAt, int64, error) {
		f, n, err := openRegular(base + suffix)
		if err != nil {
			return nil, 0, err
		}
		opened = append(opened, f)
		return f, n, nil
	})
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("symcache: shared cache %s: %w", path, err)
	}
	return c, nil
}
