package sampler

import (
	"context"
	"errors"
	"runtime"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
)

// pendingTarget is a target added and not yet picked up by a tick.
type pendingTarget struct {
	t     target.Target
	fresh bool
}

// Add starts sampling t at the next tick. The CPU time its threads used
// before that tick is not counted (it predates the profile). It may be
// called from any goroutine, also while Run is running.
func (s *Sampler) Add(t target.Target) { s.add(t, false) }

// AddStarted is Add for a process that started since sampling began (a
// launched command, or a process it started): all of its threads' CPU time
// is counted, from the process's start, the part before the tick that
// first sees a thread on the first stack captured of it.
func (s *Sampler) AddStarted(t target.Target) { s.add(t, true) }

func (s *Sampler) add(t target.Target, fresh bool) {
	s.mu.Lock()
	s.pending = append(s.pending, pendingTarget{t: t, fresh: fresh})
	s.mu.Unlock()
}

// ErrAllExited is returned by Run when every target has exited.
var ErrAllExited = errors.New("every target exited")

// Run samples until ctx is done or every target has exited, handing each
// window to OnWindow, the last one included. It returns nil when ctx ended
// the run and ErrAllExited when the targets did.
func (s *Sampler) Run(ctx context.Context) error {
	s.startTime = time.Now()
	s.win = s.newWindow(s.startTime)
	next, ticked := s.startTime, s.startTime
	var tick int64
	var reason error
	// One timer for the whole run: a tick allocates nothing. On Linux
	// the ticks come from a timerfd (tickFD), elsewhere, or if it cannot
	// be made, from a Go timer.
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	if tfd, err := newTickFD(); err == nil {
		s.tfd.Store(tfd)
		defer func() {
			s.tfd.Store(nil)
			tfd.close()
		}()
		defer context.AfterFunc(ctx, tfd.kick)()
	}
	for {
		s.adopt()
		if s.hadTargets && s.allExited() && !s.keepRunning() {
			reason = ErrAllExited
			break
		}
		// Absolute deadlines: a late tick is counted as missed, never
		// bunched up.
		interval := s.drains.interval(s.targets, s.win.start)
		next = next.Add(interval)
		now := time.Now()
		if late := now.Sub(next); late > 0 {
			skip := int64(late/interval) + 1
			if interval == s.period {
				// (A late drain loses nothing: the kernel kept
				// the samples.)
				s.win.missedT += skip
				s.win.missed[profile.MissTickLate] += skip
				if s.cfg.Mode == profile.ModeWall {
					s.lateTicks += skip
					s.win.wallDue += skip * s.wallListed
				}
			}
			next = next.Add(time.Duration(skip) * interval)
		}
		var ev waitEvent
		if tfd := s.tfd.Load(); tfd != nil {
			ev = tfd.await(ctx, next, s.wake, s.drains.now)
		} else {
			ev = awaitTimer(ctx, timer, next, s.wake, s.drains.now)
		}
		switch ev {
		case waitDone:
			if draining(s.targets) || s.cfg.Mode == profile.ModeCPU {
				// The samples the kernel took since the last
				// drain, and the CPU time used since the last
				// tick, belong in the profile too.
				tick++
				s.ending = true
				s.tick(tick)
			}
			// The profile ends: what threads used and was not
			// counted yet is.
			for _, ts := range s.targets {
				if !ts.exited {
					s.settleAll(ts)
				}
			}
			s.closeWindow(time.Now())
			return nil
		case waitWake:
			// Early: the deadlines start again from now, and the next
			// ticks come soon, as what woke the loop (an exit) may
			// take a few to show.
			next = time.Now()
			s.drains.woken()
		case waitDrainNow:
			// A kernel buffer is half full: drain it now; the
			// deadlines start again from now.
			next = time.Now()
		case waitTick:
			if s.drains.idlePoll(s.targets, ticked) {
				continue
			}
		}
		ticked = time.Now()
		tick++
		s.tick(tick)
		if s.cfg.OnTick != nil {
			s.cfg.OnTick(s.progress())
		}
		if s.cfg.Window > 0 && time.Since(s.win.start) >= s.cfg.Window {
			now := time.Now()
			s.closeWindow(now)
			s.win = s.newWindow(now)
		}
	}
	s.closeWindow(time.Now())
	return reason
}

// waitEvent is what ended a wait for the next tick.
type waitEvent uint8

const (
	waitTick     waitEvent = iota // the tick is due
	waitDone                      // Run's context is done
	waitWake                      // Wake
	waitDrainNow                  // DrainSoon
)

// awaitTimer is tickFD.await on a Go timer.
func awaitTimer(ctx context.Context, timer *time.Timer, next time.Time, wake, now chan struct{}) waitEvent {
	timer.Reset(timerDelay(time.Until(next)))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return waitDone
	case <-timer.C:
		return waitTick
	case <-wake:
		return waitWake
	case <-now:
		return waitDrainNow
	}
}

// netpollSlop is how far past a whole number of milliseconds timerDelay
// sets a timer: more than the time between arming the timer and the runtime
// computing its sleep, less than the slack the kernel may add to that
// sleep.
const netpollSlop = 30 * time.Microsecond

// timerDelay returns the delay to arm the Go tick timer with for a tick
// due in d: on Linux (where the ticks come from a timerfd unless it cannot
// be made), whole milliseconds plus netpollSlop, up to a millisecond
// early. The runtime sleeps there in epoll_pwait, whose timeout is whole
// milliseconds rounded down, so any other delay wakes it twice per tick and
// makes the tick late; deadlines stay absolute, so the rate does not drift.
func timerDelay(d time.Duration) time.Duration {
	if runtime.GOOS != "linux" || d < time.Millisecond+netpollSlop {
		return d
	}
	return (d - netpollSlop).Truncate(time.Millisecond) + netpollSlop
}

func (s *Sampler) progress() Progress {
	p := Progress{Elapsed: time.Since(s.startTime), Samples: s.total}
	for _, ts := range s.targets {
		if !ts.exited {
			p.Targets++
			p.Threads += len(ts.threads)
		}
	}
	return p
}

// adopt starts sampling the targets added since the last tick.
func (s *Sampler) adopt() {
	s.mu.Lock()
	pend := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, p := range pend {
		s.hadTargets = true
		t := p.t
		now := time.Now()
		ts := &targetState{t: t, threads: map[target.ThreadID]*threadState{}, imgAt: now, addedAt: now, fresh: p.fresh}
		ts.useDrainer(t, s.cfg.Mode)
		ts.proc, _ = t.(target.ProcessCPUReporter)
		ts.readProcBase()
		ts.refreshImages()
		s.targets = append(s.targets, ts)
	}
}

// refreshImages re-reads the target's images, keeping the last good set.
func (ts *targetState) refreshImages() {
	// An exiting process's memory map is empty for a moment before it is
	// gone: never replace known images with none.
	if imgs, err := ts.t.Images(); err == nil && imgs != nil && (imgs.Len() > 0 || ts.images == nil) {
		ts.images = imgs
	}
	if ts.exe == "" {
		if e, ok := ts.t.(target.Executabler); ok {
			ts.exe = e.Executable()
		}
	}
}

// keepRunning reports whether Run should go on without live targets: when
// the caller asked it to (an agent waiting for processes to appear).
func (s *Sampler) keepRunning() bool { return s.cfg.KeepRunning }

func (s *Sampler) allExited() bool {
	for _, ts := range s.targets {
		if !ts.exited {
			return false
		}
	}
	return true
}

// tick samples every thread of every target once.
func (s *Sampler) tick(n int64) {
	w := s.win
	w.ticks++
	if s.cfg.Timeline > 0 {
		s.now = time.Now().UnixNano()
	}
	var listed int64
	for _, ts := range s.targets {
		if ts.exited {
			continue
		}
		// Images are re-read about once a second, so that libraries
		// loaded later are known even if the target exits before the
		// window closes; sooner at first (50 ms after the target was
		// added, then twice as long each time), as a command launched
		// at its exec has no libraries mapped yet and may exit within
		// a second. At once, off that schedule, when its backend told
		// of code it may have mapped (idlePoll).
		now := time.Now()
		due := now.Sub(ts.imgAt) >= max(ts.imgEvery, firstImageRefresh)
		if due {
			ts.imgEvery = min(2*max(ts.imgEvery, firstImageRefresh), imageRefresh)
		}
		if due || ts.mapped {
			ts.imgAt, ts.mapped = now, false
			ts.refreshImages()
		}
		if keeps(ts, s.ending) {
			continue
		}
		if s.drains.drainOnly(ts, s.ending) {
			s.drainListed(ts)
			continue
		}
		ts.ticks++
		ts.listedAt = time.Now()
		var err error
		s.tids, err = ts.t.Threads(s.tids)
		if err != nil {
			s.drainAtExit(ts, n)
			s.settleAll(ts)
			ts.exited = true
			continue
		}
		listed += int64(len(s.tids))
		s.batchIDs, s.batchN, s.batchState = s.batchIDs[:0], s.batchN[:0], s.batchState[:0]
		for _, tid := range s.tids {
			s.sampleThread(ts, tid, n)
		}
		s.captureBatch(ts)
		s.noteRingWait(ts)
		s.reportImageHits(ts)
		s.countUnseen(ts)
		ts.lastTick = n
		if ts.ticks%64 == 0 {
			s.forgetGone(ts)
		}
	}
	s.wallListed = listed
}

// The times between two reads of a target's images: the first, doubled at
// each read up to the steady one.
const (
	firstImageRefresh = 50 * time.Millisecond
	imageRefresh      = time.Second
)

// loadingSpan is how long a launched command counts as loading its
// libraries (drainPolicy.next): the first reads of its images on their
// doubling schedule, 50 ms, then 100, 200, 400 and 800 ms apart.
const loadingSpan = firstImageRefresh * 31

// forgetExited tells OnExit of the targets that exited and drops them, once
// the window holding their last samples is out.
func (s *Sampler) forgetExited() {
	if s.cfg.OnExit == nil {
		return
	}
	live := s.targets[:0]
	for _, ts := range s.targets {
		if ts.exited {
			s.cfg.OnExit(ts.t)
			continue
		}
		live = append(live, ts)
	}
	clear(s.targets[len(live):])
	s.targets = live
}

// forgetGone forgets the threads of ts that its last tick did not list,
// once what they used is counted.
func (s *Sampler) forgetGone(ts *targetState) {
	for tid, th := range ts.threads {
		if th.seenTick != ts.lastTick {
			if s.cfg.Mode == profile.ModeCPU {
				s.settle(ts, tid, th)
			}
			delete(ts.threads, tid)
		}
	}
}
