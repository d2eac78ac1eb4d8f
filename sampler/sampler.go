package sampler

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/intern"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// Default rates. 99 Hz is what continuous profilers use when they must
// stay under 1% overhead (and it avoids lockstep with 100 Hz timers); a
// ptrace stop costs tens of microseconds per thread, so 999 Hz, the rate
// of Apple's sample and samply, costs a busy process several percent.
const (
	DefaultHz      = 99
	DefaultAgentHz = 19
	MaxHz          = 10000
)

// Config configures a Sampler.
type Config struct {
	// Hz is the sampling rate per thread (default DefaultHz).
	Hz int
	// Mode selects CPU or wall-clock sampling.
	Mode profile.Mode
	// Window is the length of a window; zero means one window for the
	// whole run, handed over when Run returns.
	Window time.Duration
	// MaxStacks bounds the stack interner (default 1<<16 stacks).
	MaxStacks int
	// MaxFrames bounds each walk (default 512).
	MaxFrames int
	// StackBytes bounds each bulk stack copy (default DefaultStackBytes).
	StackBytes int
	// OnWindow receives each closed window. It runs on the sampler's
	// goroutine after every thread was resumed; slow work should be handed
	// to another goroutine.
	OnWindow func(*profile.Window)
	// OnTick, when set, is called after every tick with running totals
	// (for a status line).
	OnTick func(Progress)
	// OnExit, when set, is told of each target that exited, after the
	// window holding its last samples was handed over; the sampler then
	// forgets the target. Closing it is the callee's business.
	OnExit func(target.Target)
	// KeepRunning keeps Run going when every target has exited (or before
	// any was added), until its context ends: for an agent that adds
	// targets as they appear.
	KeepRunning bool
}

// Progress is a running summary for status displays.
type Progress struct {
	Elapsed time.Duration
	Samples int64
	Threads int
	Targets int
}

// Sampler samples the threads of one or more targets at a fixed rate.
type Sampler struct {
	cfg    Config
	period time.Duration

	mu      sync.Mutex      // guards pending
	pending []pendingTarget // added by Add, picked up at the next tick

	targets []*targetState
	interns *intern.Interner
	tids    []target.ThreadID

	// The tick's batch: threads to capture and how many samples each
	// stands for; the Capture buffers are reused from tick to tick.
	batchIDs   []target.ThreadID
	batchN     []int64
	batchState []*threadState
	batchCaps  []*target.Capture
	batchErrs  []error
	// Captures for samples drained from a SampleDrainer, reused.
	drainCaps []*target.Capture

	win        *windowState
	hadTargets bool
	total      int64
	startTime  time.Time
}

type targetState struct {
	t       target.Target
	threads map[target.ThreadID]*threadState
	exited  bool
	exe     string
	ticks   int64       // ticks this target has been sampled in
	images  *images.Set // the last image set read, kept after exit
	imgAt   time.Time   // when images was last read
	// drainer is the target as a SampleDrainer, when its kernel samples
	// are on (cpu mode).
	drainer target.SampleDrainer
	// fresh: the process started since sampling began (AddStarted).
	fresh bool
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

type threadState struct {
	lastCPU   time.Duration
	pending   time.Duration // CPU time used but not yet counted as samples
	lastStack intern.StackID
	hasStack  bool
	name      string
	seenTick  int64
}

type sampleKey struct {
	pid   int
	tid   target.ThreadID
	stack intern.StackID
}

type windowState struct {
	start    time.Time
	counts   map[sampleKey]int64
	missed   map[profile.MissReason]int64
	stops    stopHistogram
	ticks    int64
	missedT  int64
	captures int64
	cpuStart time.Duration
	names    map[sampleKey]string
	// used marks stacks counted in this window; evicted keeps copies of
	// used stacks the interner evicted before the window closed.
	used    map[intern.StackID]struct{}
	evicted map[intern.StackID]profile.Stack
}

// New returns a Sampler. Targets are added with Add.
func New(cfg Config) (*Sampler, error) {
	if cfg.Hz == 0 {
		cfg.Hz = DefaultHz
	}
	if cfg.Hz < 1 || cfg.Hz > MaxHz {
		return nil, fmt.Errorf("sampling rate %d Hz out of range [1, %d]", cfg.Hz, MaxHz)
	}
	if cfg.MaxStacks == 0 {
		cfg.MaxStacks = 1 << 16
	}
	opts := target.Options{MaxFrames: cfg.MaxFrames, StackBytes: cfg.StackBytes}.WithDefaults()
	cfg.MaxFrames, cfg.StackBytes = opts.MaxFrames, opts.StackBytes
	in, err := intern.New(cfg.MaxStacks)
	if err != nil {
		return nil, err
	}
	s := &Sampler{
		cfg:     cfg,
		period:  time.Second / time.Duration(cfg.Hz),
		interns: in,
	}
	in.OnEvict(func(id intern.StackID, pcs []uint64, truncated bool) {
		if w := s.win; w != nil {
			if _, used := w.used[id]; used {
				w.evicted[id] = profile.Stack{PCs: pcs, Truncated: truncated}
			}
		}
	})
	return s, nil
}

// Period returns the sampling interval.
func (s *Sampler) Period() time.Duration { return s.period }

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
	next := s.startTime
	var tick int64
	var reason error
	// One timer for the whole run: a tick allocates nothing.
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		s.adopt()
		if s.hadTargets && s.allExited() && !s.keepRunning() {
			reason = ErrAllExited
			break
		}
		// Absolute deadlines: a late tick is counted as missed, never
		// bunched up.
		interval := s.interval()
		next = next.Add(interval)
		now := time.Now()
		if late := now.Sub(next); late > 0 {
			skip := int64(late/interval) + 1
			if interval == s.period {
				// (A late drain loses nothing: the kernel kept
				// the samples.)
				s.win.missedT += skip
				s.win.missed[profile.MissTickLate] += skip
			}
			next = next.Add(time.Duration(skip) * interval)
		}
		timer.Reset(timerDelay(time.Until(next)))
		select {
		case <-ctx.Done():
			timer.Stop()
			if s.draining() {
				// The samples the kernel took since the last
				// drain belong in the profile too.
				tick++
				s.tick(tick)
			}
			s.closeWindow(time.Now())
			return nil
		case <-timer.C:
		}
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

// netpollSlop is how far past a whole number of milliseconds timerDelay
// sets a timer: more than the few microseconds between arming the timer and
// the runtime computing its sleep, less than the 50 µs the kernel may add
// to that sleep (timer slack).
const netpollSlop = 30 * time.Microsecond

// timerDelay returns the delay to arm the tick timer with for a tick due in
// d. On Linux the Go runtime sleeps in epoll_pwait, whose timeout is whole
// milliseconds rounded down: a timer due in 10.1 ms wakes the runtime at
// 10 ms, finds nothing due, and sleeps again until 11 ms, two wake-ups per
// tick and a tick 0.9 ms late. A delay of whole milliseconds (plus a few
// microseconds) wakes it once, up to a millisecond before the deadline;
// deadlines stay absolute, so the rate does not drift. Elsewhere the
// runtime's sleeps have nanosecond timeouts and d is returned unchanged.
func timerDelay(d time.Duration) time.Duration {
	if runtime.GOOS != "linux" || d < time.Millisecond+netpollSlop {
		return d
	}
	return (d - netpollSlop).Truncate(time.Millisecond) + netpollSlop
}

// interval returns the time to the next tick: the sampling period, or the
// longer DrainInterval while every live target's threads are all sampled
// by the kernel, whose samples wait in its buffers until drained. A new
// target's first three ticks are a period apart, so that its busy threads,
// seen first at the first (their CPU time before it is not theirs to
// count), start their kernel samples once they have used a period of CPU
// rather than a drain interval later (two ticks, as a tick may come early
// by up to a millisecond, timerDelay).
func (s *Sampler) interval() time.Duration {
	draining := false
	for _, ts := range s.targets {
		if ts.exited {
			continue
		}
		if ts.drainer == nil || ts.ticks < 3 {
			return s.period
		}
		if _, all := ts.drainer.KernelSampled(); !all {
			return s.period
		}
		draining = true
	}
	if !draining {
		return s.period
	}
	return target.DrainInterval(s.period)
}

// draining reports whether any live target's kernel samples are drained.
func (s *Sampler) draining() bool {
	for _, ts := range s.targets {
		if !ts.exited && ts.drainer != nil {
			return true
		}
	}
	return false
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

func (s *Sampler) adopt() {
	s.mu.Lock()
	pend := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, p := range pend {
		s.hadTargets = true
		t := p.t
		ts := &targetState{t: t, threads: map[target.ThreadID]*threadState{}, imgAt: time.Now(), fresh: p.fresh}
		if d, ok := t.(target.SampleDrainer); ok && s.cfg.Mode == profile.ModeCPU {
			if on, _ := d.KernelSampled(); on {
				ts.drainer = d
			}
		}
		ts.refreshImages()
		s.targets = append(s.targets, ts)
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
	for _, ts := range s.targets {
		if ts.exited {
			continue
		}
		// Images are re-read about once a second, so that libraries
		// loaded later are known even if the target exits before the
		// window closes.
		if now := time.Now(); now.Sub(ts.imgAt) >= time.Second {
			ts.imgAt = now
			ts.refreshImages()
		}
		ts.ticks++
		var err error
		s.tids, err = ts.t.Threads(s.tids)
		if err != nil {
			if ts.drainer != nil {
				// The samples the kernel took since the last drain
				// are still to be had.
				for tid, th := range ts.threads {
					s.drain(ts, tid, th, true)
				}
			}
			ts.exited = true
			continue
		}
		s.batchIDs, s.batchN, s.batchState = s.batchIDs[:0], s.batchN[:0], s.batchState[:0]
		for _, tid := range s.tids {
			s.sampleThread(ts, tid, n)
		}
		s.captureBatch(ts)
		// Forget threads that are gone.
		if n%64 == 0 {
			for tid, th := range ts.threads {
				if th.seenTick != n {
					delete(ts.threads, tid)
				}
			}
		}
	}
}

func (s *Sampler) sampleThread(ts *targetState, tid target.ThreadID, tick int64) {
	w := s.win
	th := ts.threads[tid]
	if th == nil {
		th = &threadState{lastCPU: -1}
		ts.threads[tid] = th
	}
	th.seenTick = tick
	info, err := ts.t.Info(tid)
	if err != nil {
		w.missed[profile.MissThreadGone]++
		return
	}
	if info.Name != "" {
		th.name = info.Name
	}
	pid := ts.t.PID()
	if th.lastCPU < 0 {
		// First sight. A thread that was there when the target was added
		// brings CPU time from before, unless the process started since
		// sampling began (AddStarted); one that appeared since started
		// after the previous tick, so all of its CPU time is new.
		th.lastCPU = info.CPUTime
		if ts.ticks > 1 || ts.fresh {
			th.lastCPU = 0
		}
	}
	used := info.CPUTime - th.lastCPU
	th.lastCPU = info.CPUTime
	var n int64 = 1
	if s.cfg.Mode == profile.ModeCPU {
		// One sample per period of CPU time the thread used, the remainder
		// carried over: a thread that ran 20 µs is not stopped, and the
		// samples add up to the CPU time, as a CPU-clock profiler's do.
		th.pending += used
		if ts.drainer != nil && s.drain(ts, tid, th, false) {
			return
		}
		n = int64(th.pending / s.period)
		if n == 0 {
			return
		}
		th.pending -= time.Duration(n) * s.period
		// After late ticks the backlog is counted on the stack seen now
		// (so totals stay true), up to a second's worth.
		n = min(n, int64(s.cfg.Hz))
	} else if used <= 0 && th.hasStack {
		// Wall mode, idle since the last tick: count its last stack again
		// without stopping it. (A thread never captured yet is captured
		// once, idle or not.)
		s.count(pid, tid, th, th.lastStack, 1)
		return
	}
	s.batchIDs = append(s.batchIDs, tid)
	s.batchN = append(s.batchN, n)
	s.batchState = append(s.batchState, th)
}

// drainBatch is how many kernel samples are drained per DrainSamples call;
// maxDrained bounds the samples drained from one thread in one tick (a
// kernel buffer holds a few dozen; the bound keeps a backend that never
// runs dry from holding the sampler).
const (
	drainBatch = 8
	maxDrained = 4096
)

// drain counts the kernel samples of a thread taken since the previous
// tick, one period of its CPU time each, taking their periods off its
// pending CPU time, and reports whether the thread is sampled by the kernel
// (false: it is to be captured the usual way, which starts its samples).
// CPU time the kernel took no sample of (it ran in the kernel while kernel
// samples exclude it, or its buffer was full) is counted on the last stack
// once it is more than the one period the kernel's next sample may still be
// due in, so that counts add up to the CPU time as they do without kernel
// samples. At a target's exit (last), threads already gone are not
// counted as missed.
func (s *Sampler) drain(ts *targetState, tid target.ThreadID, th *threadState, last bool) bool {
	w := s.win
	pid := ts.t.PID()
	for len(s.drainCaps) < drainBatch {
		s.drainCaps = append(s.drainCaps, target.NewCapture(s.cfg.MaxFrames, s.cfg.StackBytes))
	}
	for drained := 0; drained < maxDrained; {
		for _, c := range s.drainCaps {
			c.Walk = unwind.Result{}
		}
		k, err := ts.drainer.DrainSamples(tid, s.drainCaps)
		if errors.Is(err, target.ErrNotKernelSampled) {
			return false
		}
		if err != nil {
			if !last {
				w.missed[profile.MissReasonOf(err)]++
			}
			return true
		}
		k = max(0, min(k, len(s.drainCaps)))
		drained += k
		for _, c := range s.drainCaps[:k] {
			th.pending -= s.period
			w.captures++
			w.stops.add(c.Stopped)
			if len(c.PCs) == 0 {
				w.missed[profile.MissEmptyStack]++
				continue
			}
			id := s.interns.InternHashed(c.PCs, c.Walk.Hash, c.Walk.Stop.Truncated())
			th.lastStack, th.hasStack = id, true
			s.count(pid, tid, th, id, 1)
		}
		if k < len(s.drainCaps) {
			break
		}
	}
	if n := int64(th.pending/s.period) - 1; n > 0 && th.hasStack {
		n = min(n, int64(s.cfg.Hz))
		s.count(pid, tid, th, th.lastStack, n)
		th.pending -= time.Duration(n) * s.period
	}
	// The kernel's samples run ahead of the CPU time read (the two are
	// read at different moments, and schedstat lags a running thread by
	// up to a scheduler tick, several periods at 999 Hz): the next reads
	// make it up. Up to a second's worth is carried.
	th.pending = max(th.pending, -time.Duration(s.cfg.Hz)*s.period)
	return true
}

// captureBatch captures the threads sampleThread chose, in one call when
// the backend allows it, then interns and counts their stacks.
func (s *Sampler) captureBatch(ts *targetState) {
	k := len(s.batchIDs)
	if k == 0 {
		return
	}
	for len(s.batchCaps) < k {
		s.batchCaps = append(s.batchCaps, target.NewCapture(s.cfg.MaxFrames, s.cfg.StackBytes))
		s.batchErrs = append(s.batchErrs, nil)
	}
	caps, errs := s.batchCaps[:k], s.batchErrs[:k]
	clear(errs)
	for _, c := range caps {
		// A backend that fills PCs without walking leaves Walk alone:
		// no hash from an earlier capture may stay behind.
		c.Walk = unwind.Result{}
	}
	if bc, ok := ts.t.(target.BatchCapturer); ok {
		bc.CaptureBatch(s.batchIDs, caps, errs)
	} else {
		for i, tid := range s.batchIDs {
			errs[i] = ts.t.Capture(tid, caps[i])
		}
	}
	w := s.win
	pid := ts.t.PID()
	for i, c := range caps {
		if errs[i] != nil {
			if th := s.batchState[i]; errors.Is(errs[i], target.ErrNoSample) && th.hasStack {
				// The kernel's next sample of this thread is due within
				// a period: its CPU time since is counted on the stack
				// of its last one rather than lost.
				s.count(pid, s.batchIDs[i], th, th.lastStack, s.batchN[i])
				continue
			}
			w.missed[profile.MissReasonOf(errs[i])]++
			continue
		}
		w.captures++
		w.stops.add(c.Stopped)
		if len(c.PCs) == 0 {
			w.missed[profile.MissEmptyStack]++
			continue
		}
		th := s.batchState[i]
		// The walk hashed the addresses as it read them; a capture
		// that was not walked here has Hash 0 and is hashed now.
		id := s.interns.InternHashed(c.PCs, c.Walk.Hash, c.Walk.Stop.Truncated())
		th.lastStack, th.hasStack = id, true
		s.count(pid, s.batchIDs[i], th, id, s.batchN[i])
	}
}

func (s *Sampler) count(pid int, tid target.ThreadID, th *threadState, id intern.StackID, n int64) {
	k := sampleKey{pid: pid, tid: tid, stack: id}
	s.win.counts[k] += n
	s.total += n
	if _, ok := s.win.names[k]; !ok {
		s.win.names[k] = th.name
		s.win.used[id] = struct{}{}
	}
}

func (s *Sampler) newWindow(start time.Time) *windowState {
	return &windowState{
		start:    start,
		counts:   map[sampleKey]int64{},
		missed:   map[profile.MissReason]int64{},
		names:    map[sampleKey]string{},
		used:     map[intern.StackID]struct{}{},
		evicted:  map[intern.StackID]profile.Stack{},
		cpuStart: selfCPU(),
	}
}

// closeWindow builds the Window from the counts and hands it over.
func (s *Sampler) closeWindow(end time.Time) {
	ws := s.win
	w := &profile.Window{
		Start:  ws.start,
		End:    end,
		Period: s.period,
		Mode:   s.cfg.Mode,
		Missed: ws.missed,
	}
	stackIndex := map[intern.StackID]int{}
	keys := make([]sampleKey, 0, len(ws.counts))
	for k := range ws.counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.pid != b.pid {
			return a.pid < b.pid
		}
		if a.tid != b.tid {
			return a.tid < b.tid
		}
		return a.stack < b.stack
	})
	for _, k := range keys {
		idx, ok := stackIndex[k.stack]
		if !ok {
			pcs, truncated, found := s.interns.Lookup(k.stack)
			if !found {
				st, kept := ws.evicted[k.stack]
				if !kept {
					w.Missed[profile.MissStackEvicted] += ws.counts[k]
					continue
				}
				pcs, truncated = st.PCs, st.Truncated
			}
			idx = len(w.Stacks)
			w.Stacks = append(w.Stacks, profile.Stack{PCs: append([]uint64(nil), pcs...), Truncated: truncated})
			stackIndex[k.stack] = idx
		}
		w.Samples = append(w.Samples, profile.Sample{Stack: idx, PID: k.pid, Thread: k.tid, ThreadName: ws.names[k], Count: ws.counts[k]})
	}
	for _, ts := range s.targets {
		if !ts.exited {
			ts.refreshImages()
		}
		w.Processes = append(w.Processes, profile.Process{PID: ts.t.PID(), Executable: ts.exe, Images: ts.images})
	}
	w.Stats = profile.Stats{
		Ticks:        ws.ticks,
		MissedTicks:  ws.missedT,
		Captures:     ws.captures,
		StoppedP50:   ws.stops.quantile(0.50),
		StoppedP99:   ws.stops.quantile(0.99),
		StoppedMax:   ws.stops.max,
		StoppedTotal: ws.stops.sum,
		ProfilerCPU:  selfCPU() - ws.cpuStart,
	}
	w.Stats.StopBuckets = ws.stops.nonEmpty()
	if s.cfg.OnWindow != nil {
		s.cfg.OnWindow(w)
	}
	// Forget exited targets now that their samples are out.
	if s.cfg.OnExit != nil {
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
}
