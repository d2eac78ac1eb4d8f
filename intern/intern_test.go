package intern

import (
	"hash/maphash"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/macprof/macprof/unwind"
)

func mustInterner(t testing.TB, stacks, frames int) *Interner {
	t.Helper()
	in, err := NewLimits(stacks, frames)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// constHash makes every stack collide.
func constHash([]uint64) uint64 { return 42 }

func stackOf(n int, seed uint64) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = 0x400000 + seed<<20 + uint64(i)*4
	}
	return s
}

func TestInternerBasics(t *testing.T) {
	in := mustInterner(t, 100, 10000)
	a, b := stackOf(10, 1), stackOf(10, 2)
	ida := in.Intern(a, false)
	idb := in.Intern(b, false)
	if ida == 0 || idb == 0 || ida == idb {
		t.Fatalf("ids %d %d", ida, idb)
	}
	if got := in.Intern(slices.Clone(a), false); got != ida {
		t.Errorf("same stack: id %d, want %d", got, ida)
	}
	idt := in.Intern(a, true)
	if idt == ida || idt == 0 {
		t.Errorf("truncated copy of a stack got id %d (untruncated %d)", idt, ida)
	}
	// A prefix is a different stack.
	if id := in.Intern(a[:9], false); id == ida || id == 0 {
		t.Errorf("prefix got id %d", id)
	}
	// The empty stack is a stack.
	ide := in.Intern(nil, false)
	if ide == 0 || in.Intern([]uint64{}, false) != ide {
		t.Errorf("empty stack ids differ")
	}
	// The interner keeps its own copy.
	orig := slices.Clone(a)
	a[0] = 1
	pcs, tr, ok := in.Lookup(ida)
	if !ok || tr || !slices.Equal(pcs, orig) {
		t.Errorf("Lookup(%d) = %#x %v %v, want %#x", ida, pcs, tr, ok, orig)
	}
	if _, tr, _ := in.Lookup(idt); !tr {
		t.Error("truncated flag lost")
	}
	if _, _, ok := in.Lookup(0); ok {
		t.Error("Lookup(0) found something")
	}
	if _, _, ok := in.Lookup(9999); ok {
		t.Error("Lookup of an unissued id found something")
	}
	st := in.Stats()
	if st.Hits != 2 || st.Misses != 5 || st.Stacks != 5 || st.Frames != 10+10+10+9 || in.Len() != 5 {
		t.Errorf("stats = %+v len %d", st, in.Len())
	}
}

func TestInternerBadLimits(t *testing.T) {
	for _, c := range [][2]int{{0, 1}, {1, 0}, {-1, 5}, {5, -1}} {
		if _, err := NewLimits(c[0], c[1]); err == nil {
			t.Errorf("NewLimits(%d, %d) accepted", c[0], c[1])
		}
	}
	if _, err := New(0); err == nil {
		t.Error("New(0) accepted")
	}
	in, err := New(10)
	if err != nil || in.maxFrames != 10*DefaultMaxFramesPerStack {
		t.Errorf("New(10) = %v, frames %d", err, in.maxFrames)
	}
}

// TestInternerCollisions forces every stack onto one hash: none is merged
// with another, each is found again, and the chain is evicted whole.
func TestInternerCollisions(t *testing.T) {
	in := mustInterner(t, 8, 1000)
	in.hash = constHash
	var evicted []StackID
	in.OnEvict(func(id StackID, pcs []uint64, _ bool) {
		evicted = append(evicted, id)
		if len(pcs) != 5 {
			t.Errorf("evicted stack %d has %d frames", id, len(pcs))
		}
	})
	ids := map[StackID][]uint64{}
	for i := 0; i < 8; i++ {
		s := stackOf(5, uint64(i))
		id := in.Intern(s, false)
		if _, dup := ids[id]; dup || id == 0 {
			t.Fatalf("stack %d got id %d, already used", i, id)
		}
		ids[id] = s
	}
	for id, s := range ids {
		if got := in.Intern(s, false); got != id {
			t.Errorf("colliding stack found as %d, want %d", got, id)
		}
		if pcs, _, ok := in.Lookup(id); !ok || !slices.Equal(pcs, s) {
			t.Errorf("Lookup(%d) = %v %v", id, pcs, ok)
		}
	}
	st := in.Stats()
	if st.Collisions != 7 || st.Stacks != 8 || in.lru.Len() != 1 {
		t.Errorf("stats %+v, lru keys %d", st, in.lru.Len())
	}
	// A ninth stack does not fit: the only chain (all eight) goes.
	id9 := in.Intern(stackOf(5, 9), false)
	if len(evicted) != 8 || in.Len() != 1 || in.Stats().Stacks != 1 {
		t.Errorf("evicted %d, len %d", len(evicted), in.Len())
	}
	for id := range ids {
		if _, _, ok := in.Lookup(id); ok {
			t.Errorf("evicted id %d still found", id)
		}
	}
	if pcs, _, ok := in.Lookup(id9); !ok || !slices.Equal(pcs, stackOf(5, 9)) {
		t.Errorf("new stack lost after evicting its chain")
	}
	// A colliding stack that equals another but for the truncated flag.
	if in.Intern(stackOf(5, 9), true) == id9 {
		t.Error("truncated flag ignored under collision")
	}
}

func TestInternerLRUBounds(t *testing.T) {
	in := mustInterner(t, 4, 1000)
	var evicted []StackID
	in.OnEvict(func(id StackID, _ []uint64, _ bool) { evicted = append(evicted, id) })
	id := make([]StackID, 6)
	for i := 0; i < 4; i++ {
		id[i] = in.Intern(stackOf(3, uint64(i)), false)
	}
	in.Intern(stackOf(3, 0), false) // 0 is now the most recent
	id[4] = in.Intern(stackOf(3, 4), false)
	id[5] = in.Intern(stackOf(3, 5), false)
	if !slices.Equal(evicted, []StackID{id[1], id[2]}) {
		t.Errorf("evicted %v, want stacks 1 and 2 (%d %d)", evicted, id[1], id[2])
	}
	if in.Len() != 4 {
		t.Errorf("len %d", in.Len())
	}
	// IDs are never reused.
	again := in.Intern(stackOf(3, 1), false)
	if again == id[1] || again <= id[5] {
		t.Errorf("re-interned evicted stack got id %d (old %d, last %d)", again, id[1], id[5])
	}
}

func TestInternerFrameBound(t *testing.T) {
	in := mustInterner(t, 100, 10)
	var evicted int
	in.OnEvict(func(StackID, []uint64, bool) { evicted++ })
	a := in.Intern(stackOf(4, 1), false)
	b := in.Intern(stackOf(4, 2), false)
	c := in.Intern(stackOf(4, 3), false) // 12 > 10: a goes
	if evicted != 1 || in.Stats().Frames != 8 {
		t.Errorf("evicted %d, frames %d", evicted, in.Stats().Frames)
	}
	if _, _, ok := in.Lookup(a); ok {
		t.Error("oldest stack kept past the frame bound")
	}
	for _, id := range []StackID{b, c} {
		if _, _, ok := in.Lookup(id); !ok {
			t.Errorf("stack %d lost", id)
		}
	}
	// A stack of exactly the bound empties the table; one longer is refused.
	if in.Intern(stackOf(10, 4), false) == 0 || in.Len() != 1 {
		t.Errorf("stack of the whole bound: len %d", in.Len())
	}
	if in.Intern(stackOf(11, 5), false) != 0 || in.Stats().Rejected != 1 || in.Len() != 1 {
		t.Errorf("over-long stack not refused: %+v", in.Stats())
	}
}

// TestInternerModel checks the interner against a plain map, with a weak
// hash that collides often, random stacks and small bounds.
func TestInternerModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	in := mustInterner(t, 20, 200)
	in.hash = func(pcs []uint64) uint64 {
		if len(pcs) == 0 {
			return 0
		}
		return pcs[len(pcs)-1] % 5
	}
	live := map[StackID][]uint64{}
	in.OnEvict(func(id StackID, pcs []uint64, _ bool) {
		if !slices.Equal(live[id], pcs) {
			t.Fatalf("evicted %d with %v, interned as %v", id, pcs, live[id])
		}
		delete(live, id)
	})
	byKey := map[string]StackID{}
	key := func(s []uint64, tr bool) string {
		b := make([]byte, 0, len(s)*8+1)
		for _, v := range s {
			b = append(b, byte(v), byte(v>>8))
		}
		if tr {
			b = append(b, 't')
		}
		return string(b)
	}
	for i := 0; i < 20000; i++ {
		s := make([]uint64, rng.IntN(12))
		for j := range s {
			s[j] = uint64(rng.IntN(4))
		}
		tr := rng.IntN(4) == 0
		id := in.Intern(s, tr)
		if id == 0 {
			t.Fatal("refused a stack within the bounds")
		}
		k := key(s, tr)
		if old, ok := byKey[k]; ok {
			if _, alive := live[old]; alive && old != id {
				t.Fatalf("stack %v interned as %d, still alive as %d", s, id, old)
			}
		}
		byKey[k] = id
		live[id] = slices.Clone(s)
		pcs, gotTr, ok := in.Lookup(id)
		if !ok || gotTr != tr || !slices.Equal(pcs, s) {
			t.Fatalf("Lookup(%d) = %v %v %v, want %v %v", id, pcs, gotTr, ok, s, tr)
		}
		st := in.Stats()
		if st.Stacks > 20 || st.Frames > 200 || st.Stacks != in.Len() || len(live) != in.Len() {
			t.Fatalf("bounds broken: %+v len %d live %d", st, in.Len(), len(live))
		}
		checkInvariants(t, in)
	}
	if in.Stats().Collisions == 0 || in.Stats().Evictions == 0 {
		t.Errorf("model run did not exercise collisions and evictions: %+v", in.Stats())
	}
}

// checkInvariants checks that every stack the front table holds is live
// and filed in the LRU under its hash, and that no chain is longer than
// maxChain.
func checkInvariants(t *testing.T, in *Interner) {
	t.Helper()
	for i, e := range in.front {
		if e == nil {
			continue
		}
		if in.byID[e.id] != e || e.hash&in.frontMask != uint64(i) {
			t.Fatalf("front slot %d holds stack %d, evicted or misplaced", i, e.id)
		}
		found := false
		head, _ := in.lru.Peek(e.hash)
		for c := head; c != nil; c = c.next {
			found = found || c == e
		}
		if !found {
			t.Fatalf("front slot %d holds stack %d, not in the LRU", i, e.id)
		}
	}
	n := 0
	for _, h := range in.lru.Keys() {
		head, _ := in.lru.Peek(h)
		l := 0
		for c := head; c != nil; c = c.next {
			if c.hash != h || in.byID[c.id] != c {
				t.Fatalf("chain %#x holds stack %d (hash %#x, live %v)", h, c.id, c.hash, in.byID[c.id] == c)
			}
			l++
		}
		if l > maxChain || l == 0 {
			t.Fatalf("chain %#x has %d stacks", h, l)
		}
		n += l
	}
	if n != in.Len() {
		t.Fatalf("%d stacks in chains, %d live", n, in.Len())
	}
}

// TestInternerChainBound: a target that makes every stack collide gets
// chains of at most maxChain stacks; each new stack evicts the chain's
// oldest, and the others are still found as themselves.
func TestInternerChainBound(t *testing.T) {
	in := mustInterner(t, 1000, 100000)
	in.hash = constHash
	var evicted []StackID
	in.OnEvict(func(id StackID, _ []uint64, _ bool) { evicted = append(evicted, id) })
	const n = 30
	ids := make([]StackID, n)
	for i := range ids {
		ids[i] = in.Intern(stackOf(5, uint64(i)), false)
		checkInvariants(t, in)
	}
	if st := in.Stats(); st.Stacks != maxChain || st.ChainEvictions != n-maxChain || st.Evictions != n-maxChain || in.lru.Len() != 1 {
		t.Fatalf("stats %+v, lru keys %d", st, in.lru.Len())
	}
	if !slices.Equal(evicted, ids[:n-maxChain]) {
		t.Errorf("evicted %v, want the oldest %v", evicted, ids[:n-maxChain])
	}
	for i, id := range ids {
		_, _, ok := in.Lookup(id)
		if ok != (i >= n-maxChain) {
			t.Errorf("stack %d (id %d): found %v", i, id, ok)
		}
	}
	// The survivors are hits, each found as itself; an evicted stack
	// comes back under a new ID.
	for i := n - maxChain; i < n; i++ {
		if got := in.Intern(stackOf(5, uint64(i)), false); got != ids[i] {
			t.Errorf("stack %d found as %d, want %d", i, got, ids[i])
		}
	}
	if got := in.Intern(stackOf(5, 0), false); got == ids[0] || got <= ids[n-1] {
		t.Errorf("evicted stack re-interned as %d", got)
	}
	checkInvariants(t, in)
}

// TestInternerFrontForgetsEvicted: a stack in the front table that is
// evicted is never returned from it.
func TestInternerFrontForgetsEvicted(t *testing.T) {
	in := mustInterner(t, 2, 1000)
	a, b, c := stackOf(4, 1), stackOf(4, 2), stackOf(4, 3)
	ida := in.Intern(a, false)
	if in.front[in.hash(a)&in.frontMask] == nil {
		t.Fatal("a new stack is not in the front table")
	}
	in.Intern(b, false)
	in.Intern(c, false) // evicts a
	if _, _, ok := in.Lookup(ida); ok {
		t.Fatal("a not evicted")
	}
	if e := in.front[in.hash(a)&in.frontMask]; e != nil && e.id == ida {
		t.Fatal("the front table still holds an evicted stack")
	}
	if got := in.Intern(a, false); got == ida {
		t.Errorf("evicted stack returned with its old id %d", got)
	}
	checkInvariants(t, in)
}

// TestInternerRecency checks how far eviction may stray from LRU because
// hits refresh the LRU only every refresh calls: a stack is evicted only
// after at least maxStacks-1-refresh other stacks were interned since its
// last use.
func TestInternerRecency(t *testing.T) {
	const maxStacks = 64
	in := mustInterner(t, maxStacks, 1<<20)
	rng := rand.New(rand.NewPCG(5, 6))
	var calls []uint64 // the stack (by seed) of each Intern call
	lastUse := map[StackID]int{}
	seedOf := map[StackID]uint64{}
	evictions := 0
	in.OnEvict(func(id StackID, _ []uint64, _ bool) {
		evictions++
		since := map[uint64]bool{}
		for _, k := range calls[lastUse[id]+1:] {
			if k != seedOf[id] {
				since[k] = true
			}
		}
		if min := maxStacks - 1 - int(in.refresh); len(since) < min {
			t.Fatalf("stack %d evicted after %d other stacks since its last use, want at least %d", id, len(since), min)
		}
	})
	for i := 0; i < 50000; i++ {
		// Mostly a hot set that fits, sometimes a cold stack.
		k := uint64(rng.IntN(40))
		if rng.IntN(4) == 0 {
			k = 100 + uint64(rng.IntN(400))
		}
		calls = append(calls, k)
		id := in.Intern(stackOf(8, k), false)
		lastUse[id] = len(calls) - 1
		seedOf[id] = k
	}
	if evictions < 1000 || in.Stats().Hits < 10000 {
		t.Fatalf("%d evictions, stats %+v: the run did not exercise eviction", evictions, in.Stats())
	}
	checkInvariants(t, in)
}

// TestInternHashed: InternHashed with the walk's hash is Intern; with 0 it
// hashes itself; with a wrong hash it never merges two stacks.
func TestInternHashed(t *testing.T) {
	in := mustInterner(t, 100, 10000)
	a, b := stackOf(10, 1), stackOf(10, 2)
	ida := in.InternHashed(a, unwind.HashPCs(a), false)
	if ida == 0 || in.Intern(a, false) != ida || in.InternHashed(a, 0, false) != ida {
		t.Fatal("InternHashed and Intern disagree")
	}
	if in.InternHashed(a, unwind.HashPCs(a), true) == ida {
		t.Error("truncated flag ignored")
	}
	idb := in.InternHashed(b, unwind.HashPCs(a), false) // b under a's hash
	if idb == 0 || idb == ida {
		t.Errorf("b filed under a's hash got id %d (a is %d)", idb, ida)
	}
	if in.InternHashed(a, unwind.HashPCs(a), false) != ida || in.InternHashed(b, unwind.HashPCs(a), false) != idb {
		t.Error("stacks sharing a hash not found again")
	}
	// The truncated copy of a and b share a's hash.
	if in.Stats().Collisions != 2 {
		t.Errorf("stats %+v, want two collisions", in.Stats())
	}
	checkInvariants(t, in)
}

func TestInternHitAllocs(t *testing.T) {
	in := mustInterner(t, 1024, 1<<20)
	stacks := make([][]uint64, 16)
	for i := range stacks {
		stacks[i] = stackOf(64, uint64(i))
		in.Intern(stacks[i], false)
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		if in.Intern(stacks[i%16], false) == 0 {
			t.Fatal("lost a stack")
		}
		if in.InternHashed(stacks[(i+5)%16], unwind.HashPCs(stacks[(i+5)%16]), false) == 0 {
			t.Fatal("lost a stack")
		}
		i++
	})
	if allocs != 0 {
		t.Errorf("Intern hit path allocates %.1f times per call", allocs)
	}
}

// BenchmarkIntern interns a known 64-frame stack (the hit path), cycling
// over 256 stacks so the LRU and hash work are not one cached entry. The
// stacks come with their hash, as the sampler has them from the walk
// (unwind.Result.Hash): hashing is charged to BenchmarkWalk in unwind.
func BenchmarkIntern(b *testing.B) {
	in := mustInterner(b, 4096, 1<<20)
	stacks := make([][]uint64, 256)
	hashes := make([]uint64, 256)
	for i := range stacks {
		stacks[i] = stackOf(64, uint64(i))
		hashes[i] = unwind.HashPCs(stacks[i])
		in.Intern(stacks[i], false)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		in.InternHashed(stacks[i&255], hashes[i&255], false)
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/stack")
}

// BenchmarkInternUnhashed is BenchmarkIntern for stacks that come without
// a hash (Intern hashes them with unwind.HashPCs).
func BenchmarkInternUnhashed(b *testing.B) {
	in := mustInterner(b, 4096, 1<<20)
	stacks := make([][]uint64, 256)
	for i := range stacks {
		stacks[i] = stackOf(64, uint64(i))
		in.Intern(stacks[i], false)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		in.Intern(stacks[i&255], false)
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/stack")
}

// BenchmarkInternMiss adds new 64-frame stacks to a full interner (evicting).
func BenchmarkInternMiss(b *testing.B) {
	in := mustInterner(b, 1024, 1<<20)
	s := stackOf(64, 1)
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		s[0] = i
		in.Intern(s, false)
		i++
	}
}

// maphashPCs hashes the addresses' bytes with hash/maphash (the runtime's
// AES-based hash on amd64 and arm64): the interner's hash before the walk
// computed one, kept for BenchmarkHash.
func maphashPCs(seed maphash.Seed, pcs []uint64) uint64 {
	return maphash.Bytes(seed, pcBytes(pcs))
}

// mixHash is an unkeyed alternative BenchmarkHash compares with: a
// multiply-xorshift mix per word, four independent lanes.
func mixHash(_ maphash.Seed, pcs []uint64) uint64 {
	const m = 0x9e3779b97f4a7c15
	var a, b, c, d uint64 = 1, 2, 3, 4
	i := 0
	for ; i+4 <= len(pcs); i += 4 {
		a = (a ^ pcs[i]) * m
		b = (b ^ pcs[i+1]) * m
		c = (c ^ pcs[i+2]) * m
		d = (d ^ pcs[i+3]) * m
	}
	for ; i < len(pcs); i++ {
		a = (a ^ pcs[i]) * m
	}
	h := a ^ (b<<17 | b>>47) ^ (c<<31 | c>>33) ^ (d<<47 | d>>17) ^ uint64(len(pcs))
	h ^= h >> 29
	h *= m
	return h ^ h>>32
}

func BenchmarkHash(b *testing.B) {
	pcs := stackOf(64, 7)
	seed := maphash.MakeSeed()
	for _, f := range []struct {
		name string
		fn   func(maphash.Seed, []uint64) uint64
	}{{"maphash", maphashPCs}, {"mix4", mixHash}, {"unwind.HashPCs", func(_ maphash.Seed, pcs []uint64) uint64 { return unwind.HashPCs(pcs) }}} {
		b.Run(f.name, func(b *testing.B) {
			var sink uint64
			for b.Loop() {
				sink += f.fn(seed, pcs)
			}
			_ = sink
		})
	}
}

func TestMixHashSpreads(t *testing.T) {
	// mixHash is only a benchmark alternative, but check it is a hash.
	seen := map[uint64]bool{}
	for i := 0; i < 1000; i++ {
		seen[mixHash(maphash.Seed{}, stackOf(64, uint64(i)))] = true
	}
	if len(seen) != 1000 {
		t.Errorf("mixHash: %d distinct of 1000", len(seen))
	}
}
