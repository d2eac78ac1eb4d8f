package sampler

import (
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

// keepingTarget is a drainingTarget that keeps its samples itself
// (target.SampleKeeper) until a moment, as process rings do while the
// command runs; its threads are sampled from the start.
type keepingTarget struct {
	*drainingTarget
	until time.Time
	keeps int
	// listedWhileKept counts the listings made before Keep first said no.
	listedWhileKept int
	gone            bool // its exit's listing was made
}

// Threads, once it exited, still gives its threads with the exit, as
// process rings do: what they left is to be drained.
func (k *keepingTarget) Threads(dst []target.ThreadID) ([]target.ThreadID, error) {
	if !k.ExitAt.IsZero() && time.Now().After(k.ExitAt) {
		k.listings++
		dst = dst[:0]
		if !k.gone {
			k.gone = true
			dst = append(dst, k.IDs()...)
		}
		return dst, target.ErrExited
	}
	return k.drainingTarget.Threads(dst)
}

func (k *keepingTarget) Keep() bool {
	if time.Now().Before(k.until) {
		k.keeps++
		k.listedWhileKept = k.listings
		return true
	}
	return false
}

// TestKeeperIsLeftAloneWhileItKeeps: while a target keeps its samples, ticks
// neither list nor drain it (nor take a capture to start its samples); once
// it stops keeping, one listing hands out everything, and every sample the
// kernel took is counted once, on its own stack.
func TestKeeperIsLeftAloneWhileItKeeps(t *testing.T) {
	const hz = 100
	d := newKeptDraining(hz)
	k := &keepingTarget{drainingTarget: d, until: time.Now().Add(400 * time.Millisecond)}
	ws := run(t, Config{Hz: hz}, 700*time.Millisecond, k)
	if k.keeps < 2 || k.listedWhileKept != 0 {
		t.Errorf("Keep said yes %d times, with %d listings meanwhile; want 2 or more, and none", k.keeps, k.listedWhileKept)
	}
	if d.Captures(1)+d.Captures(2) != 0 {
		t.Errorf("%d captures of a keeping target, want none", d.Captures(1)+d.Captures(2))
	}
	checkEveryDrainedCounted(t, ws, d)
	if first := d.drained[1]; first < 40 {
		t.Errorf("thread 1 (a whole CPU for 700 ms at 100 Hz): %d samples drained", first)
	}
}

// TestKeeperThatExitedIsDrainedOnce: a keeping target that exited gives its
// threads with the exit; the sampler drains what they kept then (every
// sample counted once) and stops, without another tick.
func TestKeeperThatExitedIsDrainedOnce(t *testing.T) {
	const hz = 100
	d := newKeptDraining(hz)
	until := time.Now().Add(300 * time.Millisecond)
	d.ExitAt = until
	k := &keepingTarget{drainingTarget: d, until: until}
	start := time.Now()
	ws := run(t, Config{Hz: hz}, 5*time.Second, k)
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("the sampler ran %v after its only target exited at 300 ms", took)
	}
	if k.listings != 1 || k.listedWhileKept != 0 {
		t.Errorf("%d listings (%d while it kept); want the exit's alone", k.listings, k.listedWhileKept)
	}
	checkEveryDrainedCounted(t, ws, d)
}

// newKeptDraining returns a drainingTarget of two threads, one using a CPU
// and one half a CPU, sampled from the start, as process rings sample them.
func newKeptDraining(hz int) *drainingTarget {
	d := newDraining(10, time.Second/time.Duration(hz), map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{1, 2, 3}},
		2: {Share: 0.5, Stack: []uint64{4, 5}},
	})
	d.started[1], d.started[2] = 0, 0
	return d
}

// checkEveryDrainedCounted checks that every sample d's two threads handed
// out was counted once, on its own stack.
func checkEveryDrainedCounted(t *testing.T, ws []*profile.Window, d *drainingTarget) {
	t.Helper()
	for _, tid := range []target.ThreadID{1, 2} {
		stopped, sampled, _ := drainedCounts(ws[0], tid, d.Thread(tid).Stack)
		if stopped != 0 || sampled != d.drained[tid] || d.drained[tid] == 0 {
			t.Errorf("thread %d: %d samples counted from drains and %d on other stacks, of %d drained; want all drained, and on their own stacks",
				tid, sampled, stopped, d.drained[tid])
		}
	}
}
