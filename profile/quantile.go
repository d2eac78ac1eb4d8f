package profile

import (
	"cmp"
	"slices"
	"time"
)

func sortBuckets(b []StopBucket) {
	slices.SortFunc(b, func(x, y StopBucket) int { return cmp.Compare(x.Low, y.Low) })
}

// bucketQuantile returns the lower bound of the bucket that holds quantile
// q of the distribution b (in increasing order), capped at max: the rule
// the sampler's own stop histogram uses, so that merged windows report
// percentiles the way single ones do.
func bucketQuantile(b []StopBucket, q float64, maxStop time.Duration) time.Duration {
	var n int64
	for _, x := range b {
		n += x.Count
	}
	if n == 0 {
		return 0
	}
	rank := int64(q*float64(n-1)) + 1
	var seen int64
	for _, x := range b {
		seen += x.Count
		if seen >= rank {
			return min(x.Low, maxStop)
		}
	}
	return maxStop
}
