package unwind

import (
	"math/bits"
	"math/rand/v2"
)

// The stack hash. Walk folds every address it returns into a running hash,
// in a dependency chain of its own beside the pointer chase it is waiting
// on, and stores the result in Result.Hash; HashPCs computes the same value
// from a slice, for stacks that were not walked here.
//
// The addresses come from the target, which may be hostile and choose them
// to make many stacks collide (to fill a hash chain, or to learn which
// stacks are known). A mix of multiplies and xor-shifts under fixed
// constants would let it find collisions offline: a difference in the top
// bit of an address passes through a 64-bit multiply unchanged, so it can
// be cancelled by the next address. The hash is therefore keyed with
// secret values drawn at random once per process, and each step is a
// 64x64→128-bit multiply by the secret key folded to 64 bits (hi ^ lo, the
// "mum" step of wyhash), whose output differences depend on the key.
//
// The key is per process, not per Walker, so that stacks walked by
// different walkers (one per target) and stacks hashed with HashPCs agree:
// an interner keyed by the hash sees one stack as one key whatever walked
// it. A target cannot read the profiler's memory, so it learns the key no
// more than it would a per-walker one.
//
// Layout: two lanes take the addresses in turn (even positions in lane a,
// odd in lane b), so that HashPCs runs two multiply chains side by side,
// and the walk has twice the time per step that one chain would give it.
// The length and both lanes are folded together at the end. The result is
// never zero, so that zero can stand for "no hash" (see Result.Hash).

// hashKey is the process's secret hash key.
type hashKey struct {
	a, b uint64 // initial values of the two lanes
	k    uint64 // multiplier of every step: odd, about half of its bits set
}

var procHashKey = newHashKey()

func newHashKey() hashKey {
	k := hashKey{a: rand.Uint64(), b: rand.Uint64()}
	for {
		k.k = rand.Uint64() | 1
		// A multiplier with few or many bits set mixes badly.
		if n := bits.OnesCount64(k.k); n >= 24 && n <= 40 {
			return k
		}
	}
}

// mum multiplies x by k to 128 bits and folds the halves together.
func mum(x, k uint64) uint64 {
	hi, lo := bits.Mul64(x, k)
	return hi ^ lo
}

// finish folds the two lanes and the number of addresses into the hash.
func (k *hashKey) finish(a, b uint64, n int) uint64 {
	h := mum(mum(a^uint64(n), k.k)^b, k.k)
	if h == 0 {
		h = 1
	}
	return h
}

// HashPCs returns the hash of the addresses pcs that Walk reports in
// Result.Hash when it returns exactly pcs: a keyed 64-bit hash of the
// addresses and their number, never zero. The key is drawn at random once
// per process, so two slices hash alike only by chance (about 2^-64 per
// pair) whatever their contents, yet the same slice always hashes alike
// within one process.
func HashPCs(pcs []uint64) uint64 {
	k := &procHashKey
	a, b := k.a, k.b
	i := 0
	for ; i+2 <= len(pcs); i += 2 {
		a = mum(a^pcs[i], k.k)
		b = mum(b^pcs[i+1], k.k)
	}
	if i < len(pcs) {
		// One step of the walk's form: the lanes trade places.
		a, b = b, mum(a^pcs[i], k.k)
	}
	return k.finish(a, b, len(pcs))
}
