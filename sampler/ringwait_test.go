package sampler

import (
	"fmt"
	"testing"
	"time"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

// nappingTarget is a drainingTarget one of whose threads uses CPU time
// for upTo from its first sight, then sleeps for good (a command's main
// thread that starts its workers and waits for them).
type nappingTarget struct {
	*drainingTarget
	napper target.ThreadID
	upTo   time.Duration
	first  time.Duration // its CPU time at first sight (-1: not seen)
	// starved: after upTo it is still runnable, waiting for a CPU.
	starved bool
}

func (d *nappingTarget) Info(t target.ThreadID) (target.ThreadInfo, error) {
	info, err := d.drainingTarget.Info(t)
	if t != d.napper || err != nil {
		return info, err
	}
	if d.first < 0 {
		d.first = info.CPUTime
	}
	if info.CPUTime > d.first+d.upTo {
		info.CPUTime, info.Running = d.first+d.upTo, d.starved
	}
	return info, err
}

// TestTicksLeaveASleepingThreadsStart: a thread that used CPU time at its
// start, less than a period, and then sleeps never has a first capture to
// wait for, so it keeps the ticks a period apart for no more than
// ringWaitIdleFor (100 ms at 99 Hz, 10 ms at 999 Hz), not the whole
// ringWaitMax: at 99 Hz, 100 listings in the first second rather than a
// few, at 999 Hz 100 where 10 do. The busy thread's samples all count.
func TestTicksLeaveASleepingThreadsStart(t *testing.T) {
	for _, hz := range []int{99, 999} {
		t.Run(fmt.Sprint(hz, "Hz"), func(t *testing.T) { testTicksLeaveASleepingThreadsStart(t, hz) })
	}
}

func testTicksLeaveASleepingThreadsStart(t *testing.T, hz int) {
	const runFor = 900 * time.Millisecond
	period := time.Second / time.Duration(hz)
	d := &nappingTarget{napper: 2, upTo: period * 2 / 5, first: -1, drainingTarget: newDraining(10, period, map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{1, 2}},
		2: {Share: 1, Stack: []uint64{3, 4}},
	})}
	// Drains a second apart at 99 Hz, 280 ms at 999 Hz (a hybrid ring's).
	d.maxDrain, d.drainPeriods = time.Second, 280
	begin, wait0 := time.Now(), schedWait()
	ws := run(t, Config{Hz: hz}, runFor, d)
	elapsed, wait := time.Since(begin), schedWait()-wait0
	// Three listings a period apart to start, those of ringWaitIdleFor
	// after the listing that last saw the napper's CPU time grow (for upTo
	// from its first sight, and up to two ticks later), the busy thread's
	// first capture's, the drains', the last tick's, and four for a loaded
	// machine's late ticks and this process's wait for a CPU; without
	// ringWaitIdle, 89 at 99 Hz (ringWaitMax).
	idle := map[int]time.Duration{99: 100 * time.Millisecond, 999: 10 * time.Millisecond}[hz]
	most := 3 + int((idle+d.upTo+2*period)/(period*9/10)) + 1 + int(runFor/d.DrainInterval()) + 1 + 4 + int(wait/period)
	t.Logf("%d listings in %v, at most %d", d.listings, elapsed, most)
	if d.listings > most {
		t.Errorf("threads listed %d times in %v (waited %v for a CPU), want at most %d: ticks a period apart for a thread that sleeps", d.listings, elapsed, wait, most)
	}
	stopped, sampled, _ := drainedCounts(ws[0], 1, []uint64{1, 2})
	if n := d.drained[1]; stopped == 0 || sampled < n || sampled > n+2 || n < int64(runFor/period)*4/10 {
		t.Errorf("busy thread: %d samples on the stop's stack, %d on drained samples' stacks; %d drained, want each counted once", stopped, sampled, n)
	}
}

// TestTicksWaitForAStarvedThreadsStart: a thread still to start its kernel
// samples whose CPU time stops growing while it stays runnable (a loaded
// machine gives it no CPU) keeps the ticks a period apart, up to
// ringWaitMax, as one that runs: its first capture must not wait for a
// drain interval, counting all its CPU time until then on one stack.
func TestTicksWaitForAStarvedThreadsStart(t *testing.T) {
	const hz, runFor = 999, 300 * time.Millisecond
	period := time.Second / hz
	d := &nappingTarget{napper: 2, upTo: period * 2 / 5, first: -1, starved: true, drainingTarget: newDraining(10, period, map[target.ThreadID]*targettest.Thread{
		1: {Share: 1, Stack: []uint64{1, 2}},
		2: {Share: 1, Stack: []uint64{3, 4}},
	})}
	d.maxDrain, d.drainPeriods = time.Second, 280
	begin, wait0 := time.Now(), schedWait()
	run(t, Config{Hz: hz}, runFor, d)
	elapsed, wait := time.Since(begin), schedWait()-wait0
	// A listing each period the process was given a CPU for, less slack.
	if least := int((elapsed-wait)/period) / 3; d.listings < least {
		t.Errorf("threads listed %d times in %v (waited %v for a CPU), want at least %d: ticks a drain apart while a runnable thread waits for its first capture", d.listings, elapsed, wait, least)
	}
}
