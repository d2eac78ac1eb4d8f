package symcache

import (
	"math/rand"
	"slices"
	"testing"
)

// TestLookupIndexNear checks that LookupIndexNear answers as LookupIndex
// whatever its hint: on tables with and without sizes (gaps between
// functions), for addresses in increasing order with the last answer as
// the hint, as symbolize asks, and for any address with a random hint.
func TestLookupIndexNear(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, sized := range []bool{false, true} {
		for _, n := range []int{1, 2, 3, 10, 1000} {
			var syms []Symbol
			a := uint64(0x1000)
			for range n {
				a += 1 + uint64(rng.Intn(64))
				s := Symbol{Name: "f", Start: a}
				if sized && rng.Intn(3) > 0 {
					s.Size = 1 + uint64(rng.Intn(40))
				}
				syms = append(syms, s)
			}
			tab := NewTable("t", syms, nil, nil)
			addrs := make([]uint64, 4*n)
			for i := range addrs {
				addrs[i] = 0xff0 + uint64(rng.Intn(int(a-0xff0)+100))
			}
			slices.Sort(addrs)
			near := -1
			for _, addr := range addrs {
				want := tab.LookupIndex(addr)
				if got := tab.LookupIndexNear(addr, near); got != want {
					t.Fatalf("sized %v, %d functions: LookupIndexNear(%#x, %d) = %d, want %d", sized, n, addr, near, got, want)
				}
				if h := rng.Intn(n+2) - 1; tab.LookupIndexNear(addr, h) != want {
					t.Fatalf("sized %v, %d functions: LookupIndexNear(%#x, %d) = %d, want %d", sized, n, addr, h, tab.LookupIndexNear(addr, h), want)
				}
				if want >= 0 {
					near = want
				}
			}
		}
	}
}
