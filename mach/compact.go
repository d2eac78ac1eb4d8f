package mach

import (
	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/unwind"
	"github.com/macprof/macprof/unwind/compact"
)

// CompactImages returns the compact unwind image set for a target's
// images, walked as arch: each Mach-O image's __TEXT range and load
// address, with its table when cache already holds it; the others are
// built when a walk first needs them (BuildCompactTables).
func CompactImages(set *images.Set, cache *compact.Cache, arch unwind.Arch) (*compact.Images, error) {
	var list []compact.Image
	if set != nil {
		for _, im := range set.Images() {
			if im.Format != images.FormatMachO || im.LoadAddress == 0 {
				continue
			}
			ci := compact.Image{Start: im.Start, End: im.Limit, Base: im.LoadAddress, Key: im.BuildID}
			ci.Table, _ = cache.Lookup(im.BuildID)
			list = append(list, ci)
		}
	}
	return compact.NewImages(arch, list)
}

// BuildCompactTables builds the tables walks asked for since the last call,
// reading each image's __unwind_info from the target's memory r through
// cache. It runs between captures, never while a thread is stopped.
func BuildCompactTables(imgs *compact.Images, cache *compact.Cache, r unwind.MemoryReader) (int, error) {
	return imgs.BuildWanted(func(im compact.Image) (*compact.Table, error) {
		return cache.Get(im.Key, func() (*compact.Table, error) {
			t, _, err := compact.FromMemory(r, im.Base)
			return t, err
		})
	})
}
