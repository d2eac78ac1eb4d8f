package sampler

import (
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
)

// drainPolicy decides when the loop ticks while targets' kernel samples are
// drained (target.SampleDrainer), and what those ticks do for them: the
// loop keeps the timer and the tick, the backend its own schedule
// (DrainInterval), and this how the two meet across targets and windows.
type drainPolicy struct {
	period  time.Duration
	window  time.Duration // Config.Window
	settled func() bool   // Config.Settled
	// every is the time between ticks the loop is keeping (0 outside Run).
	every time.Duration
	// soon counts the ticks after a Wake that come at most listEvery apart.
	soon int
	// poll, when set, is the interval the targets ask for, which every
	// shortens to listEvery only to look for code a loading command
	// mapped (idlePoll).
	poll time.Duration
	// now makes Run tick at once, and only that (DrainSoon).
	now chan struct{}
}

func newDrainPolicy(cfg Config, period time.Duration) drainPolicy {
	return drainPolicy{period: period, window: cfg.Window, settled: cfg.Settled, now: make(chan struct{}, 1)}
}

// DrainSoon makes Run drain at once rather than at its next deadline, once,
// without the quick ticks that follow a Wake; it may be called from any
// goroutine. A backend calls it when a kernel sample buffer is half full
// (target.Options.Kernel.SamplesWaiting).
func (s *Sampler) DrainSoon() {
	select {
	case s.drains.now <- struct{}{}:
	default:
	}
	if tfd := s.tfd.Load(); tfd != nil {
		tfd.kick()
	}
}

// useDrainer makes t's kernel samples, when it has them on (cpu mode
// only), the source of ts's running threads' samples.
func (ts *targetState) useDrainer(t target.Target, mode profile.Mode) {
	d, ok := t.(target.SampleDrainer)
	if !ok || mode != profile.ModeCPU {
		return
	}
	if on, _ := d.KernelSampled(); !on {
		return
	}
	ts.drainer = d
	ts.loss, _ = t.(target.SampleLossReporter)
	ts.watcher, _ = t.(target.ThreadWatcher)
	// One that does not keep its samples when added never will (it has
	// no buffer of its own to keep them from).
	if k, ok := t.(target.SampleKeeper); ok && k.Keep() {
		ts.keeper = k
	}
}

// interval returns the time to the next tick and keeps it as every: the
// sampling period, or the longer drain interval (the shortest the targets
// ask for) while every live target's threads are all sampled by the
// kernel, whose samples wait in its buffers until drained. A new target's
// first three ticks are a period apart (unless it keeps its samples: its
// threads are sampled from their start), so that its busy threads (seen
// first at the first, which does not count their CPU time before) start
// their kernel samples after a period of CPU rather than a drain interval;
// it takes two ticks as a tick may come early (timerDelay). They stay a
// period apart after that while a thread is still to start its kernel
// samples (waitsForRing). winStart is the start of the open window.
func (p *drainPolicy) interval(targets []*targetState, winStart time.Time) time.Duration {
	p.every = p.next(targets, winStart)
	return p.every
}

func (p *drainPolicy) next(targets []*targetState, winStart time.Time) time.Duration {
	p.poll = 0
	var every time.Duration
	loading := false
	for _, ts := range targets {
		if ts.exited {
			continue
		}
		if ts.drainer == nil || (ts.ticks < 3 || waitsForRing(ts)) && ts.keeper == nil {
			return p.period
		}
		if _, all := ts.drainer.KernelSampled(); !all {
			return p.period
		}
		if d := ts.drainer.DrainInterval(); every == 0 || d < every {
			every = d
		}
		// By the clock, not by imgEvery, which grows only at ticks
		// that list: with those a drain interval apart, it kept a
		// 99 Hz recording of bench/cbusy polling every listEvery for
		// 3.3 s rather than 1.55.
		loading = loading || ts.fresh && time.Since(ts.addedAt) < loadingSpan
	}
	if every <= 0 {
		return p.period
	}
	switch {
	case every <= listEvery+listSlop:
		// (Within a slop of listEvery, as a ring of a hundred
		// periods at 999 Hz asks for 100.1 ms: what Settled would
		// make of it is no shorter, and it reads a file.)
	case loading:
		// A process started since sampling began (a launched
		// command) whose images are still read ever more rarely (its
		// first second and a half, as it loads its libraries) is
		// drained at least every listEvery, so that the walks of its
		// samples find code it mapped since while it lives: a command
		// that dlopened a library and exited within a second had its
		// last samples walked after its exit, in code no map read had
		// seen (TestRecordWalksLibrariesLoadedLate, on a quiet
		// machine). Such a tick is skipped while the command mapped
		// nothing (idlePoll).
		p.poll, every = every, listEvery
	case p.soon > 0:
		p.soon--
		every = listEvery
	case p.settled != nil && !unchanged(targets) && !p.settled():
		// Something new may have started: look again soon. (Not
		// while every target's backend tells that none of its
		// threads started, ended or changed since its last listing:
		// the system's other processes are none of this recording's.)
		every = listEvery
	}
	if p.window > 0 {
		// A window closes at the first tick after its end: a drain
		// interval as long as the window would make it twice as long.
		// (windowSlop: a timer may fire up to a millisecond early.)
		if rem := time.Until(winStart.Add(p.window)) + windowSlop; rem > 0 && rem < every {
			every, p.poll = rem, 0 // (a tick that closes a window is never skipped)
		}
	}
	return every
}

// idlePoll reports whether a tick due now, last a real tick at last, has
// nothing to do: it came listEvery after the last only to look for code a
// loading command mapped (poll), the drain the targets ask for is not due,
// and no live target's backend tells of a mapping, exec or thread start
// since its last listing (target.ThreadWatcher). Where one may have, the
// tick re-reads that target's images whatever their schedule. A skipped
// tick costs a timer's wake-up and the look at the rings' heads, about a
// tenth of a tick that lists the threads, reads their CPU time and drains.
func (p *drainPolicy) idlePoll(targets []*targetState, last time.Time) bool {
	if p.poll <= 0 || time.Since(last) >= p.poll*9/10 {
		return false
	}
	idle := true
	for _, ts := range targets {
		if ts.exited {
			continue
		}
		if ts.watcher == nil || !ts.watcher.ImagesUnchanged() {
			idle = false
			ts.mapped = true
		}
	}
	return idle
}

// waitsForRing reports whether ts's ticks stay a period apart for a thread
// that used CPU time but has no kernel samples yet: they start at its
// first capture, which waits for a period of its CPU time, and a drain
// interval's backlog would all be counted on that one stack (a thread
// given a third of a CPU by a loaded machine is not captured in the first
// three ticks). At most ringWaitMax from the listing that found it, so
// that a thread that barely runs does not keep them so for ever.
func waitsForRing(ts *targetState) bool {
	return !ts.ringWait.IsZero() && time.Since(ts.ringWait) < ringWaitMax
}

// ringWaitMax bounds how long a thread waiting for its first capture keeps
// ticks a period apart (waitsForRing).
const ringWaitMax = time.Second

// ringWaitIdle is how long after its CPU time last grew a thread still to
// start its kernel samples keeps ticks a period apart: one that used some
// at its start and then sleeps (a command's main thread that waits for its
// workers) has nothing for a first capture to catch up on, and a second of
// ticks a period apart was most of what a 99 Hz recording of bench/cbusy
// cost while its workers ran. At high rates it is ten periods, at least
// 10 ms (ringWaitIdleFor): at 999 Hz, 100 ms were a hundred ticks.
const ringWaitIdle = 100 * time.Millisecond

// ringWaitIdleFor is ringWaitIdle at a sampling period.
func ringWaitIdleFor(period time.Duration) time.Duration {
	return min(ringWaitIdle, max(10*period, 10*time.Millisecond))
}

// noteRingWait notes, after a listing of ts, whether a thread of it used
// CPU time, lately (ringWaitIdleFor), but is neither sampled by the kernel
// nor was captured now, so that its samples have not started
// (waitsForRing).
func (s *Sampler) noteRingWait(ts *targetState) {
	if ts.drainer == nil || s.cfg.Mode != profile.ModeCPU {
		return
	}
	for _, tid := range s.tids {
		if th := ts.threads[tid]; th != nil && !th.drained && !th.captured && th.pending > 0 && ts.listedAt.Sub(th.ranAt) < ringWaitIdleFor(s.period) {
			if ts.ringWait.IsZero() {
				ts.ringWait = ts.listedAt
			}
			return
		}
	}
	ts.ringWait = time.Time{}
}

// unchanged reports whether every live target's backend tells that none of
// its threads started, ended or changed since its last listing
// (target.ThreadWatcher).
func unchanged(targets []*targetState) bool {
	for _, ts := range targets {
		if !ts.exited && (ts.watcher == nil || !ts.watcher.ThreadsUnchanged()) {
			return false
		}
	}
	return true
}

// woken makes the next wakeTicks ticks come at most listEvery apart, as
// what woke the loop (an exit) may take a few to show.
func (p *drainPolicy) woken() { p.soon = wakeTicks }

// wakeTicks is how many ticks after a Wake come at most listEvery apart:
// a process whose exit woke the sampler may still show a thread or two.
const wakeTicks = 10

// windowSlop is added to the time left in a window when a drain is brought
// forward to its end, so that the tick lands after it.
const windowSlop = 2 * time.Millisecond

// draining reports whether any live target's kernel samples are drained.
func draining(targets []*targetState) bool {
	for _, ts := range targets {
		if !ts.exited && ts.drainer != nil {
			return true
		}
	}
	return false
}

// keeps reports whether a tick leaves ts alone: its backend keeps its
// samples until it exits or the recording ends (ending: the run's last
// tick), or its memory for them is full.
func keeps(ts *targetState, ending bool) bool {
	return ts.keeper != nil && !ending && ts.keeper.Keep()
}

// drainOnly reports whether this tick only drains the kernel samples of
// ts's threads drained at its last listing: while every thread of ts is
// sampled by the kernel and ticks come more often than listEvery, its
// threads are listed and their CPU time read only every listEvery (and at
// the run's last tick, ending), as a drain interval can be as short as a
// period (10 ms with stack copies at 999 Hz) and listing the threads costs
// as much as draining them. While its backend tells that no thread
// started, ended or changed since the last listing (target.ThreadWatcher),
// the threads go unlisted up to quietListEvery.
func (p *drainPolicy) drainOnly(ts *targetState, ending bool) bool {
	if ts.drainer == nil || ts.ticks < 3 || waitsForRing(ts) || ending || p.every <= 0 {
		return false
	}
	// A listing is due when the drains come every or it was last
	// listed every ago (less a tenth, as ticks may come early).
	due := func(every time.Duration) bool {
		return p.every >= every*9/10 || time.Since(ts.listedAt) >= every*9/10
	}
	if due(listEvery) && (ts.watcher == nil || due(quietListEvery) || !ts.watcher.ThreadsUnchanged()) {
		return false
	}
	_, all := ts.drainer.KernelSampled()
	return all
}

// listEvery is the longest a kernel-sampled target's threads go unlisted
// (drainOnly): new threads are found, and the CPU time of those the kernel
// took no sample of counted, this often.
const listEvery = target.DefaultMaxDrainInterval

// listSlop is how far past listEvery a drain interval is kept without
// asking Config.Settled: at 999 Hz a ring of a hundred periods asks for
// 100.1 ms.
const listSlop = listEvery / 50

// quietListEvery is listEvery while the backend tells that no thread
// started, ended or changed (target.ThreadWatcher): the CPU time of threads
// the kernel takes no sample of is counted this often, and a drain takes
// off a thread's pending CPU time samples up to this long after it was read
// (drain carries up to two seconds of them).
const quietListEvery = 500 * time.Millisecond
