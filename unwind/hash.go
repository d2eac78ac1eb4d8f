package unwind

import (
	"math/bits"
	"math/rand/v2"
)

// The stack hash. Walk folds every address it returns into a running hash
// as it reads it, beside the pointer chase it is waiting on, and stores the
// result in Result.Hash; HashPCs computes the same value from a slice, for
// stacks that were not walked here.
//
// The addresses come from the target, which may be hostile and choose them
// to make many stacks collide. Under fixed constants, or with a step such
// as s' = (s^x)*k, it could find collisions offline: a difference in the
// top bit of an address passes through a 64-bit multiply unchanged, so the
// next address can cancel it, whatever the key. The hash is therefore
// keyed with secret values drawn at random once per process, and folds the
// addresses two at a time into a state s with the "mum" step of wyhash:
//
//	s = hi ^ lo of the 128-bit product (s ^ x[i]) * (x[i+1] ^ kb)
//
// whose output differences depend on the secret state and key. An odd
// last address is folded with a secret constant, then the number of
// addresses. One step per two addresses keeps the walk's loop short: the
// step costs instructions, not latency (it never waits on the pointer
// chase), and the loop is throughput-bound on a busy core.
//
// The key is per process, not per Walker, so that stacks walked by
// different walkers (one per target) and stacks hashed with HashPCs agree:
// an interner keyed by the hash sees one stack as one key whatever walked
// it. A target cannot read the profiler's memory, so it learns the key no
// more than it would a per-walker one. The result is never zero, so that
// zero can stand for "no hash" (see Result.Hash).

// hashKey is the process's secret hash key.
type hashKey struct {
	s  uint64 // the initial state
	kb uint64 // xored into the second address of each pair
	ko uint64 // the multiplier of an odd last address
	kf uint64 // the multiplier of the final step
}

var procHashKey = newHashKey()

func newHashKey() hashKey {
	return hashKey{s: rand.Uint64(), kb: rand.Uint64(), ko: denseOdd(), kf: denseOdd()}
}

// denseOdd returns a random odd multiplier with about half of its bits
// set: one with few or many mixes badly.
func denseOdd() uint64 {
	for {
		k := rand.Uint64() | 1
		if n := bits.OnesCount64(k); n >= 24 && n <= 40 {
			return k
		}
	}
}

// mum multiplies x by y to 128 bits and folds the halves together.
func mum(x, y uint64) uint64 {
	hi, lo := bits.Mul64(x, y)
	return hi ^ lo
}

// pair folds the addresses x and y (in this order) into the state s.
func (k *hashKey) pair(s, x, y uint64) uint64 { return mum(s^x, y^k.kb) }

// push folds x, the n-th address, into the state: into s with the one
// before it (half) when n is even, else it becomes half.
func (k *hashKey) push(s, half, x uint64, n int) (uint64, uint64) {
	if n%2 == 0 {
		return k.pair(s, half, x), half
	}
	return s, x
}

// finish folds an odd last address (half, when n is odd) and the number of
// addresses n into the state s and returns the hash.
func (k *hashKey) finish(s, half uint64, n int) uint64 {
	if n%2 == 1 {
		s = mum(s^half, k.ko)
	}
	h := mum(s^uint64(n), k.kf)
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
	s, half := k.s, uint64(0)
	i := 0
	for ; i+2 <= len(pcs); i += 2 {
		s = k.pair(s, pcs[i], pcs[i+1])
	}
	if i < len(pcs) {
		half = pcs[i]
	}
	return k.finish(s, half, len(pcs))
}
