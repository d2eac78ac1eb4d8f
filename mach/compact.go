package mach

import (
	"github.com/macprof/macprof/unwind/compact"
	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/unwind"
)

// CompactImages returns the compact unwind image set for a target's
// images: each Mach-O image's __TEXT range and load address, with its table
// when cache already holds it; the others are built when a walk first
// needs them (BuildCompactTables).
func CompactImages(set *images.Set, cache *compactunwind.Cache) (*compactunwind.Images, error) {
	var list []compactunwind.Image
	if set != nil {
		for _, im := range set.Images() {
			if im.Format != images.FormatMachO || im.LoadAddress == 0 {
				continue
			}
			ci := compactunwind.Image{Start: im.Start, End: im.Limit, Base: im.LoadAddress, Key: im.BuildID}
			ci.Table, _ = cache.Lookup(im.BuildID)
			list = append(list, ci)
		}
	}
	return compactunwind.NewImages(list)
}

// BuildCompactTables builds the tables walks asked for since the last call,
// reading each image's __unwind_info from the target's memory r through
// cache. It runs between captures, never while a thread is stopped.
func BuildCompactTables(imgs *compactunwind.Images, cache *compactunwind.Cache, r unwind.MemoryReader) (int, error) {
	return imgs.BuildWanted(func(im compactunwind.Image) (*compactunwind.Table, error) {
		return cache.Get(im.Key, func() (*compactunwind.Table, error) {
			t, _, err := compactunwind.FromMemory(r, im.Base)
			return t, err
		})
	})
}
