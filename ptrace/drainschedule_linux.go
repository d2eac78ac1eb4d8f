//go:build linux && (amd64 || arm64)

package ptrace

import "time"

// How often the sampler drains a target's rings: each ring as often as it
// was sized for, or as half the time it took to fill at its last drain's
// rate, whichever is longer (Target.DrainInterval).

// DrainInterval returns how often the rings must be drained
// (target.SampleDrainer): a ring with callchains holds a hundred periods'
// samples or more (chainDrainPeriods), one with stack copies ten or thirty
// (stackDrainPeriods); but a thread that uses a fraction of a CPU fills its
// ring that much more slowly, so each ring is drained as often as it was
// sized for or, if that is longer, as half the time it took to fill at the
// rate of its last drain: the interval is the longest the rings with
// callchains allow unless some ring with stack copies would fill within
// twice it at that rate (or its rate is not known yet). A small ring with
// callchains (the budget for big ones spent) of a thread that idles thus
// does not hold every drain to a hundred periods, but is drained within
// the time it holds should its thread turn busy with samples as large as
// the largest drained yet (chainFill). A
// target without rings (its threads idle: a shell waiting for its
// children) holds no other target's drains to a shorter interval; a thread
// that gets busy is found when the sampler next lists the threads.
func (t *Target) DrainInterval() time.Duration {
	short := t.drainInterval(drainPeriods)
	k := t.kernel
	if k == nil {
		return short
	}
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	long := t.drainInterval(maxChainPeriods)
	if p := k.proc; p != nil {
		if !k.procWatched {
			// A CPU's ring fills as fast as one busy thread
			// fills a ring of its own.
			for _, r := range p.rings {
				long = min(long, t.chainFill(r)/2)
			}
		}
		return max(long, t.opts.Kernel.Period)
	}
	if p := k.kids; p != nil {
		// Read only when the threads are listed, each CPU's ring
		// within the time one busy thread takes to fill it, and
		// within half that while it holds records or the last
		// second's collects read samples: most commands start no
		// process, and their empty rings need not halve the interval
		// (at 999 Hz, 120 ms rather than 60), but a ring a
		// descendant keeps filling must be read with a margin for a
		// late tick, or the kernel drops its samples and the exits of
		// its processes. An empty ring that wakes the sampler when
		// half full (record's) holds no drain: the wake comes first.
		busy := p.recentlySampled(time.Now())
		for _, r := range p.rings {
			unread := r.unread()
			if !busy && !unread && r.stopWatch != nil {
				continue
			}
			fill := t.kidsFill(p, r)
			if busy || unread {
				fill /= 2
			}
			long = min(long, fill)
		}
	}
	for _, th := range t.threads {
		if r := th.kernel.ring; r != nil && r.chain && r.interval > 0 && r.stopWatch == nil {
			long = min(long, max(r.interval, min(th.kernel.fill/2, t.chainFill(r))))
		}
	}
	if k.stackRings.Load() == 0 {
		return long
	}
	// Each ring with stack copies as often as it was sized for, or as
	// its last drain's rate would fill half of it if that is longer.
	d := long
	for _, th := range t.threads {
		if r := th.kernel.ring; r != nil && !r.chain {
			every := r.interval
			if every <= 0 {
				every = short
			}
			if th.kernel.fill > 0 {
				every = max(every, th.kernel.fill/2)
			}
			d = min(d, every)
		}
	}
	return max(d, t.opts.Kernel.Period)
}

// chainFill returns how long the ring with callchains r would take to fill
// if its thread kept a CPU busy, with samples as large as the largest
// drained yet (any size the kernel may write, before the first). The
// caller holds hotMu.
func (t *Target) chainFill(r *perfRing) time.Duration {
	size := t.kernel.chainRecord
	if size == 0 {
		size = perfSampleMaxBytes(0)
	}
	holds := len(r.data)/size - perfRingSlack
	return time.Duration(max(holds, 1)) * t.opts.Kernel.Period
}

// kidsFill returns how long ring r of descendant rings p would take to
// fill if its CPU were kept busy by descendants: as chainFill, or with
// samples of p's stack copies. The caller holds hotMu.
func (t *Target) kidsFill(p *processRings, r *perfRing) time.Duration {
	if p.stack == 0 {
		return t.chainFill(r)
	}
	holds := len(r.data)/perfSampleMaxBytes(p.stack) - perfRingSlack
	return time.Duration(max(holds, 1)) * t.opts.Kernel.Period
}

// noteDrain records, at the end of a drain of a ring, how long the ring
// would take to fill at the rate of its samples since the last drain: in
// samples for stack copies (all one size), in bytes for callchains (as long
// as the stack they were taken on).
func (tk *threadKernel) noteDrain(now time.Time) {
	if tk.ring == nil {
		return
	}
	if !tk.lastDrain.IsZero() {
		var holds, used int
		if tk.ring.chain {
			holds, used = len(tk.ring.data)-perfRingSlack*perfSampleMaxBytes(0), tk.drainedBytes
		} else {
			size := tk.ring.sampleMax
			if size == 0 {
				size = perfSampleMaxBytes(tk.ringStack)
			}
			holds, used = len(tk.ring.data)/size-perfRingSlack, tk.drained
		}
		fill := float64(now.Sub(tk.lastDrain)) * float64(max(holds, 1)) / float64(max(used, 1))
		tk.fill = time.Duration(min(fill, float64(time.Hour)))
	}
	tk.drained, tk.drainedBytes, tk.lastDrain = 0, 0, now
}

// ThreadsUnchanged reports whether no thread of t's process started,
// ended, was renamed or mapped code since its threads were last listed
// (target.ThreadWatcher): its descendant rings, which inherit into every
// thread the process starts, receive a record of each (attr.task, comm,
// mmap: perf_event_task writes into the events of the thread that forks
// or exits) beside its descendants' samples, and the listing reads them
// all, so rings with nothing unread mean nothing of the kind happened
// since. Without descendant rings (an attached process), or with process
// rings, which its own samples fill, it cannot tell: false; nor while a
// thread has no ring, whose turning busy only a listing's capture sees.
func (t *Target) ThreadsUnchanged() bool { return t.unchanged(true) }

// ImagesUnchanged reports, as ThreadsUnchanged, whether no thread of t's
// process started, ended or was renamed and it mapped no code and exec'd
// nothing since its threads were last listed, whether or not each thread
// has a ring of its own: a listing now would find no new code
// (target.ThreadWatcher).
func (t *Target) ImagesUnchanged() bool { return t.unchanged(false) }

// unchanged is ThreadsUnchanged (everyRing: each thread has a ring) or
// ImagesUnchanged.
func (t *Target) unchanged(everyRing bool) bool {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	k := t.kernel
	if k == nil || k.proc != nil || k.kids == nil || t.closed || t.exited || len(t.departed) > 0 {
		return false
	}
	for _, th := range t.threads {
		if everyRing && th.kernel.ring == nil {
			// Captured by stops at listings (idle, its ring
			// closed): its turning busy shows only there, and its
			// CPU time until then goes on the stack seen then.
			return false
		}
	}
	return k.kids.quiet()
}

// quiet reports whether p has rings and the kernel wrote nothing into
// them since they were last read.
func (p *processRings) quiet() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rings {
		if r.unread() {
			return false
		}
	}
	return len(p.rings) > 0
}
