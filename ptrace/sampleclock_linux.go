//go:build linux && (amd64 || arm64)

package ptrace

import (
	"time"
)

// sampleClock turns the times of kernel samples, taken on CLOCK_MONOTONIC
// (perf_event_attr.use_clockid), into time.Time (target.Capture.Time) from
// one reading of both clocks: samples drained long after they were taken
// keep their own time, so that a timeline shows when each thread ran. Its
// zero value knows no time.
type sampleClock struct {
	mono int64 // CLOCK_MONOTONIC in nanoseconds, read with wall
	wall time.Time
}

// newSampleClock reads both clocks; the zero sampleClock if it cannot.
func newSampleClock() sampleClock {
	mono, err := clockMonotonic()
	if err != nil {
		return sampleClock{}
	}
	return sampleClock{mono: mono, wall: time.Now()}
}

// at returns the time of a sample taken at ns on CLOCK_MONOTONIC, or the
// zero time if c knows none.
func (c sampleClock) at(ns uint64) time.Time {
	if c.wall.IsZero() {
		return time.Time{}
	}
	return c.wall.Add(time.Duration(int64(ns) - c.mono))
}
