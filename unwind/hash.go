package unwind

import (
	"math/bits"
	"math/rand/v2"
)

// The stack hash: Walk folds each address into it as it reads it, and
// HashPCs computes the same value from a slice. Addresses come from a
// possibly hostile target, so the hash is keyed with secrets drawn once per
// process and folds addresses in pairs with wyhash's "mum" step,
//
//	s = hi ^ lo of the 128-bit product (s ^ x[i]) * (x[i+1] ^ kb),
//
// whose collisions cannot be found offline (a plain multiply passes a
// top-bit difference through unchanged). An odd last address and then the
// count are folded in last. The key is per process, not per Walker, so that
// every walker and HashPCs agree on one stack's hash.

// hashKey is the process's secret hash key.
type hashKey struct {
	s  uint64 // the initial state
	kb uint64 // xored into the second address of each pair
	ko uint64 // the multiplier of an odd last address
	kf uint64 // the multiplier of the final step
}

// procHashKey is the key every Walker and HashPCs use.
var procHashKey = newHashKey()

// newHashKey draws a random key.
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

// HashPCs returns the hash Walk reports in Result.Hash when it returns
// exactly pcs: keyed, never zero, the same for the same slice within one
// process, so that stacks not walked here intern alongside walked ones.
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
