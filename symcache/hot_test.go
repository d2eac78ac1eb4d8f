package symcache

import (
	"slices"
	"testing"
)

// TestHotCacheAfterLookups: a Cache answers its first hotAfter-1
// lookups without the hot cache (a snapshot's few dozen cost no 128 KiB
// of fresh memory), then through it, with the same frames throughout.
func TestHotCacheAfterLookups(t *testing.T) {
	img, _ := openFixture(t, "prog_arm64", "")
	cache := New(Options{})
	ref := New(Options{})
	pcs := make([]uint64, 64)
	for i := range pcs {
		pcs[i] = img.Start + 0x400 + uint64(i)*16
	}
	for n := range 2 * hotAfter {
		pc := pcs[n%len(pcs)]
		if got, want := cache.Symbolize(img, pc, true), ref.Symbolize(img, pc, true); !slices.Equal(got, want) {
			t.Fatalf("lookup %d, %#x: %v, want %v", n, pc, got, want)
		}
		if hot := cache.hot.Load() != nil; hot != (n >= hotAfter-1) {
			t.Fatalf("after %d lookups: hot cache %v", n+1, hot)
		}
	}
}
