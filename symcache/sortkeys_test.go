package symcache

import (
	"cmp"
	"math/rand"
	"slices"
	"testing"
)

// TestSortKeys checks sortKeys against a comparison sort of (start, rank,
// index), on tables large enough for its radix sort: starts that share
// their top bytes (one library) and that do not, with many symbols at one
// start (aliases) of different ranks.
func TestSortKeys(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 5, 1000, 5000, 100_000} {
		for _, spread := range []uint64{1 << 12, 1 << 26, 1 << 63} {
			keys := make([]symKey, n)
			for i := range keys {
				keys[i] = symKey{start: 0x7f0000000000 + rng.Uint64()%spread, pri: uint32(rng.Intn(4)) << 29, idx: uint32(i)}
				if i > 0 && rng.Intn(3) == 0 {
					keys[i].start = keys[rng.Intn(i)].start // an alias
				}
			}
			want := slices.Clone(keys)
			slices.SortFunc(want, func(a, b symKey) int {
				return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.pri, b.pri), cmp.Compare(a.idx, b.idx))
			})
			sortKeys(keys)
			if !slices.Equal(keys, want) {
				t.Fatalf("%d keys, spread %#x: order differs from the comparison sort", n, spread)
			}
		}
	}
}
