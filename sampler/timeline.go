package sampler

import "github.com/macprof/macprof/profile"

// timeline keeps a window's samples in the order they were counted, with
// their times (Config.Timeline), for profile.Window.Timeline. Entries go in
// fixed-size chunks, so that appending never copies what is there and a
// sample allocates nothing but one chunk in timelineChunk.
type timeline struct {
	chunks  [][]timed
	n       int
	dropped int64
}

// timed is one timeline entry: n samples of the window's count index at
// time at (Unix nanoseconds).
type timed struct {
	at    int64
	index int32
	n     int32
}

// timelineChunk is how many entries a chunk holds (1 MiB).
const timelineChunk = 1 << 16

// add appends n samples of count index at time at, or counts them as
// dropped once the timeline holds limit entries.
func (t *timeline) add(limit int, at int64, index int32, n int64) {
	if t.n >= limit {
		t.dropped += n
		return
	}
	if k := len(t.chunks); k == 0 || len(t.chunks[k-1]) == cap(t.chunks[k-1]) {
		t.chunks = append(t.chunks, make([]timed, 0, min(timelineChunk, limit-t.n)))
	}
	last := &t.chunks[len(t.chunks)-1]
	*last = append(*last, timed{at: at, index: index, n: int32(min(n, 1<<31-1))})
	t.n++
}

// entries returns the timeline with each count index turned into its
// sample's (sampleOf; an entry whose count has no sample, -1, is left out
// and its samples counted as dropped).
func (t *timeline) entries(sampleOf []int32) []profile.TimedSample {
	if t.n == 0 {
		return nil
	}
	out := make([]profile.TimedSample, 0, t.n)
	for _, c := range t.chunks {
		for _, e := range c {
			if int(e.index) >= len(sampleOf) || sampleOf[e.index] < 0 {
				t.dropped += int64(e.n)
				continue
			}
			out = append(out, profile.TimedSample{Time: e.at, Sample: sampleOf[e.index], Count: e.n})
		}
	}
	return out
}
