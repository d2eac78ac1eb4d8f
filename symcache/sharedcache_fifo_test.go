//go:build unix

package symcache_test

import (
	"encoding/hex"
	"os"
	"syscall"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/images/dyldcachetest"
	"github.com/macprof/macprof/symcache"
)

// TestSharedCacheRefusesFIFO: a subcache path that is a FIFO is refused
// without being opened (an open would block until a writer came): the
// image stays unnamed and the lookup returns.
func TestSharedCacheRefusesFIFO(t *testing.T) {
	c := buildCache(t)
	dir := t.TempDir()
	main := c.WriteCache(t, dir, c.SubUUID())
	sub := main + dyldcachetest.SubCacheSuffix
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(sub, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	img := cacheImages(t, c, c.Mem)[0]
	img.Memory = deadTask{}
	img.SharedCache = hex.EncodeToString(c.UUID[:])
	cache := symcache.New(symcache.Options{Loaders: map[images.Format]symcache.Loader{
		images.FormatMachO: symcache.MachOLoader(symcache.MachOOptions{SharedCacheDirs: []string{dir}}),
	}})
	for name, addr := range c.Dylibs[0].Exports {
		if fr := cache.Symbolize(img, addr+dyldcachetest.Slide, false); fr[0].Function != "" {
			t.Errorf("export %s named %q through a FIFO subcache", name, fr[0].Function)
		}
	}
}
