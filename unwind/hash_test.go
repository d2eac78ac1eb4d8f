package unwind

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestHashPCs checks HashPCs (two addresses per step) against the
// one-address-at-a-time definition, and that it tells apart stacks that
// differ in any one way: an address, the order, the length, a trailing
// zero.
func TestHashPCs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	seen := map[uint64][]uint64{}
	add := func(pcs []uint64) {
		t.Helper()
		h := HashPCs(pcs)
		if h != refHash(pcs) || h == 0 {
			t.Fatalf("HashPCs(%#x) = %#x, refHash %#x", pcs, h, refHash(pcs))
		}
		if old, dup := seen[h]; dup {
			t.Fatalf("%#x and %#x both hash to %#x", old, pcs, h)
		}
		seen[h] = pcs
	}
	add(nil)
	for n := 1; n <= 40; n++ {
		pcs := make([]uint64, n)
		for i := range pcs {
			pcs[i] = 0x400000 + rng.Uint64N(1<<20)
		}
		add(pcs)
		add(append(pcs[:n:n], 0)) // a zero appended
		if pcs[0] != pcs[n-1] {
			add(append([]uint64{pcs[n-1]}, pcs[1:]...)) // first replaced by the last
		}
		if n >= 2 {
			sw := append([]uint64(nil), pcs...)
			sw[0], sw[1] = sw[1], sw[0]
			if sw[0] != sw[1] {
				add(sw) // order matters
			}
		}
	}
	// HashPCs of the empty slice and of nil agree.
	if HashPCs([]uint64{}) != HashPCs(nil) {
		t.Error("empty and nil stacks hash differently")
	}
}

// TestHashTopBitDifferences: a step of the form s' = (s^x)*k passes a
// difference in the top bit of x through unchanged, whatever the key, so
// a target could make stacks collide without knowing the key by flipping
// the top bit of two addresses of one lane. The hash must tell them apart.
func TestHashTopBitDifferences(t *testing.T) {
	const top = 1 << 63
	base := []uint64{0x401000, 0x402000, 0x403000, 0x404000, 0x405000}
	h0 := HashPCs(base)
	for i := range base {
		for j := i + 1; j < len(base); j++ {
			for _, d := range []uint64{top, top | top>>32, 1} {
				s := append([]uint64(nil), base...)
				s[i] ^= d
				s[j] ^= d
				if HashPCs(s) == h0 {
					t.Errorf("flipping %#x in addresses %d and %d leaves the hash unchanged", d, i, j)
				}
			}
		}
	}
}

// TestHashKeyed: the hash depends on the key, and the process's key is a
// usable one.
func TestHashKeyed(t *testing.T) {
	pcs := []uint64{0x401000, 0x402000, 0x403000}
	k1, k2 := newHashKey(), newHashKey()
	h := func(k *hashKey) uint64 {
		return k.finish(k.pair(k.s, pcs[0], pcs[1]), pcs[2], len(pcs))
	}
	if k1 == k2 || h(&k1) == h(&k2) {
		t.Errorf("two random keys give the same hash: %+v %+v", k1, k2)
	}
	if pk := procHashKey; h(&pk) != HashPCs(pcs) {
		t.Error("HashPCs does not use the process's key")
	}
	for _, k := range []hashKey{k1, k2, procHashKey} {
		for _, m := range []uint64{k.ko, k.kf} {
			if n := bits.OnesCount64(m); m&1 == 0 || n < 24 || n > 40 {
				t.Errorf("multiplier %#x: even or badly mixed", m)
			}
		}
	}
	w := mustWalker(t, Config{Arch: ArchAMD64})
	if w.key != procHashKey {
		t.Error("a Walker does not use the process's key")
	}
}

// BenchmarkHashPCs hashes a 64-address stack after the fact, as Intern
// does for stacks that come without Result.Hash.
func BenchmarkHashPCs(b *testing.B) {
	pcs := make([]uint64, 64)
	for i := range pcs {
		pcs[i] = 0x400000 + uint64(i)*0x40
	}
	var sink uint64
	for b.Loop() {
		sink += HashPCs(pcs)
	}
	_ = sink
}
