package cfi

import "testing"

// TestResolverRuleCacheAfterLookups: a resolver answers its first
// ruleCacheAfter-1 lookups without a rule cache (a snapshot's few dozen
// cost no 48 KiB of fresh memory), then keeps rules in one, with the
// same answers throughout.
func TestResolverRuleCacheAfterLookups(t *testing.T) {
	libc, _ := systemObjects(t)
	tab, err := Load(libc)
	if err != nil {
		t.Fatal(err)
	}
	rows := wholeBuild(t, libc).AllRows()
	const base = 0x7f00_0000_0000
	r := NewResolver(NewCache(CacheOptions{Load: func(string) (*Table, error) { return tab, nil }}),
		[]Object{{Start: base, Limit: base + 1<<30, Key: "libc", Path: "libc.so.6"}})
	for pass := range 2 {
		for i := range 2 * ruleCacheAfter {
			off := rows[i*len(rows)/(2*ruleCacheAfter)].Off
			got, fp := r.Rule(base + off)
			if want := tab.Find(off); got != want || fp {
				t.Fatalf("pass %d, lookup %d, %#x: %v (frame pointers %v), the table says %v", pass, i, off, got, fp, want)
			}
			if cached := r.rules != nil; pass == 0 && cached != (i >= ruleCacheAfter-1) {
				t.Fatalf("after %d lookups: rule cache %v", i+1, cached)
			}
		}
	}
}
