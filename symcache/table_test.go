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

// TestBuildBuckets checks the bucket table against its definition
// (buckets[k] is the greatest i with starts[i] <= bucketBase + k<<shift)
// and LookupIndex against a linear scan, on starts dense, sparse and
// spread over the whole address space.
func TestBuildBuckets(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, n := range []int{1, 2, 7, 1000, 50_000} {
		for _, gap := range []uint64{1, 16, 1000, 1 << 44} {
			starts := make([]uint64, n)
			a := uint64(rng.Intn(1 << 20))
			for i := range starts {
				starts[i] = a
				a += 1 + uint64(rng.Int63n(int64(gap)))
			}
			tab := &Table{starts: starts}
			tab.buildBuckets()
			for k, got := range tab.buckets {
				addr := tab.bucketBase + uint64(k)<<tab.bucketShift
				want := 0
				for want+1 < n && starts[want+1] <= addr {
					want++
				}
				if k == len(tab.buckets)-1 {
					want = n - 1
				}
				if int(got) != want {
					t.Fatalf("%d starts, gap %d: bucket %d (%#x) = %d, want %d", n, gap, k, addr, got, want)
				}
				if k > 200 {
					break // the rest is checked by the lookups
				}
			}
			for range 2000 {
				addr := starts[0] + rng.Uint64()%(starts[n-1]-starts[0]+2)
				want := 0
				for want+1 < n && starts[want+1] <= addr {
					want++
				}
				if got := tab.LookupIndex(addr); got != want {
					t.Fatalf("%d starts, gap %d: LookupIndex(%#x) = %d, want %d", n, gap, addr, got, want)
				}
			}
		}
	}
}

// TestNewTableWithStartsMatchesNewTable: merging ascending anonymous
// starts into the sorted symbols builds the table that sorting them with
// the symbols does, on random symbols that share starts with each other
// and with the starts (named and anonymous, sized and not), on thousands
// of starts around a few symbols, and on starts that repeat or do not
// ascend.
func TestNewTableWithStartsMatchesNewTable(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	names := []string{"", "a", "bb", "ccc", "main", "x"}
	for round := range 500 {
		var syms []Symbol
		for range rng.Intn(40) {
			s := Symbol{Name: names[rng.Intn(len(names))], Start: 0x1000 + uint64(rng.Intn(64))*4}
			if round%3 == 0 && rng.Intn(2) == 0 {
				s.Size = uint64(1 + rng.Intn(16))
			}
			syms = append(syms, s)
		}
		var starts []uint64
		end, keep := uint64(0x1100+0x40), 3
		if round%4 == 1 {
			// Many starts around few symbols: long runs of starts
			// between two symbols, found by galloping.
			end, keep = 0x1000+4*3000, 1
		}
		for a := uint64(0x1000); a < end; a += 4 {
			if rng.Intn(keep) == 0 {
				starts = append(starts, a)
			}
		}
		if round%5 == 2 && len(starts) > 0 {
			// Repeated starts, which do not strictly ascend.
			for range 1 + rng.Intn(5) {
				k := rng.Intn(len(starts))
				starts = slices.Insert(starts, k, starts[k])
			}
		}
		if round%7 == 0 {
			rng.Shuffle(len(starts), func(i, j int) { starts[i], starts[j] = starts[j], starts[i] })
		}
		all := slices.Clone(syms)
		for _, a := range starts {
			all = append(all, Symbol{Start: a})
		}
		want := NewTable("o", all, nil, nil)
		got := NewTableWithStarts("o", syms, slices.Clone(starts), nil, nil)
		if !slices.Equal(got.starts, want.starts) || !slices.Equal(got.names, want.names) || !slices.Equal(got.ends, want.ends) || (got.ends == nil) != (want.ends == nil) || !slices.Equal(got.buckets, want.buckets) {
			t.Fatalf("round %d: syms %v starts %v:\nmerged  %v %q %v\nsorted  %v %q %v", round, syms, starts, got.starts, got.names, got.ends, want.starts, want.names, want.ends)
		}
	}
}

// TestGallop checks gallop against a linear scan: the least p with
// s[p] >= v, for v below, among, between and above s's values.
func TestGallop(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 100, 1025} {
		s := make([]uint64, n)
		a := uint64(10)
		for i := range s {
			a += 1 + uint64(rng.Intn(3))
			s[i] = a
		}
		for v := uint64(0); v <= a+2; v++ {
			want := 0
			for want < n && s[want] < v {
				want++
			}
			if got := gallop(s, v); got != want {
				t.Fatalf("%d values: gallop(%d) = %d, want %d", n, v, got, want)
			}
		}
	}
}
