package symcache_test

import (
	"encoding/hex"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/images/dyldcachetest"
	"github.com/macprof/macprof/symcache"
)

// TestMemoryGoneUsesSharedCache: dylibs of the dyld shared cache whose
// task has exited (every read fails) are named from the cache's files on
// disk: the main file, the subcache holding the dylibs and the shared
// linkedit, and the .symbols file for the locals. A cache whose UUID is
// not the images' is not used, and neither is one whose subcache belongs
// to another cache.
func TestMemoryGoneUsesSharedCache(t *testing.T) {
	c := buildCache(t)
	var other [16]byte
	copy(other[:], "another-cache-id")
	for _, tc := range []struct {
		name      string
		cacheUUID [16]byte // the images' SharedCache
		subUUID   [16]byte // the subcache file's header
		wantNamed bool
	}{
		{"same cache", c.UUID, c.SubUUID(), true},
		{"another cache", other, c.SubUUID(), false},
		{"foreign subcache", c.UUID, other, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c.WriteCache(t, dir, tc.subUUID)
			imgs := cacheImages(t, c, c.Mem)
			for _, img := range imgs {
				img.Memory = deadTask{}
				img.SharedCache = hex.EncodeToString(tc.cacheUUID[:])
			}
			cache := symcache.New(symcache.Options{Loaders: map[images.Format]symcache.Loader{
				images.FormatMachO: symcache.MachOLoader(symcache.MachOOptions{Pools: symcache.NewStringPools(0), SharedCacheDirs: []string{dir}}),
			}})
			if tc.wantNamed {
				checkCacheNames(t, c, cache, imgs, true)
				return
			}
			for i, d := range c.Dylibs {
				for name, addr := range d.Exports {
					if fr := cache.Symbolize(imgs[i], addr+dyldcachetest.Slide, false); fr[0].Function != "" {
						t.Errorf("%s: export %s named %q from a cache that is not the image's", imgs[i].Path, name, fr[0].Function)
					}
				}
			}
		})
	}
}
