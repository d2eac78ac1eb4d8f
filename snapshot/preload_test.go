package snapshot

import (
	"sync"
	"testing"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
)

// TestPreloadLoadsEachObjectOnce: preload loads the table of every object
// the stacks meet, each once, whatever the number of stacks in it, and
// none of an object they do not meet; Wait returns once all are loaded.
func TestPreloadLoadsEachObjectOnce(t *testing.T) {
	var mu sync.Mutex
	loads := map[string]int{}
	cache := symcache.New(symcache.Options{Loaders: map[images.Format]symcache.Loader{
		images.FormatELF: func(img *images.Image) (*symcache.Table, error) {
			mu.Lock()
			loads[img.Path]++
			mu.Unlock()
			return symcache.NewTable(img.Path, []symcache.Symbol{{Name: "f", Start: 0}}, nil, nil), nil
		},
	}})
	var imgs []*images.Image
	for i, name := range []string{"a", "b", "c", "unused"} {
		start := uint64(i+1) << 20
		imgs = append(imgs, &images.Image{Path: "/lib/" + name, Start: start, Limit: start + 1<<16, Format: images.FormatELF})
	}
	set := images.NewSet(imgs)
	caps := []target.Capture{
		{PCs: []uint64{1<<20 + 5, 2<<20 + 5, 1<<20 + 9}},
		{PCs: []uint64{3<<20 + 1, 2<<20 + 7, 0x42}},
		{PCs: []uint64{1<<20 + 1}},
	}
	preload(cache, set, caps).Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"a", "b", "c"} {
		if n := loads["/lib/"+name]; n != 1 {
			t.Errorf("%s: loaded %d times, want once", name, n)
		}
	}
	if n := loads["/lib/unused"]; n != 0 {
		t.Errorf("an object no stack meets loaded %d times", n)
	}
}
