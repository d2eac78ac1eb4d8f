package sampler

import (
	"math/bits"
	"time"

	"github.com/macprof/macprof/profile"
)

// stopHistogram records the window's stop times in log-linear buckets, 16
// per power of two, so that its quantiles are within a sixteenth of the
// true value and a tick adds to it without allocating.
type stopHistogram struct {
	buckets [64 * 16]int64
	n       int64
	sum     time.Duration
	max     time.Duration
}

func bucketOf(d time.Duration) int {
	v := uint64(d)
	if v < 16 {
		return int(v)
	}
	msb := 63 - bits.LeadingZeros64(v)
	sub := (v >> (msb - 4)) & 15
	return (msb-3)*16 + int(sub)
}

func bucketLow(i int) time.Duration {
	if i < 16 {
		return time.Duration(i)
	}
	msb := i/16 + 3
	sub := uint64(i % 16)
	return time.Duration((uint64(1) << msb) | sub<<(msb-4))
}

func (h *stopHistogram) add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.buckets[bucketOf(d)]++
	h.n++
	h.sum += d
	h.max = max(h.max, d)
}

// quantile returns the lower bound of the bucket holding quantile q.
func (h *stopHistogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(q*float64(h.n-1)) + 1
	var seen int64
	for i, c := range h.buckets {
		seen += c
		if seen >= rank {
			return min(bucketLow(i), h.max)
		}
	}
	return h.max
}

// nonEmpty returns the non-empty buckets in ascending order.
func (h *stopHistogram) nonEmpty() []profile.StopBucket {
	var out []profile.StopBucket
	for i, c := range h.buckets {
		if c != 0 {
			out = append(out, profile.StopBucket{Low: bucketLow(i), Count: c})
		}
	}
	return out
}
