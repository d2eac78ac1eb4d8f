// Package sampler is the sampling loop: it asks targets for captures at a
// fixed rate, interns the stacks and hands out profile.Windows.
package sampler

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/intern"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
)

// Default rates. DefaultHz is the rate continuous profilers use to keep
// their overhead low, and it does not beat against 100 Hz timers; the agent
// stops threads for its samples and so samples less often.
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
	// MaxFrames bounds each walk (default unwind.DefaultMaxFrames).
	MaxFrames int
	// StackBytes bounds each bulk stack copy (default
	// target.DefaultStackBytes).
	StackBytes int
	// OnWindow receives each closed window. It runs on the sampler's
	// goroutine after every thread was resumed; slow work should be handed
	// to another goroutine.
	OnWindow func(*profile.Window)
	// OnTick, when set, is called after every tick with running totals
	// (for a status line).
	OnTick func(Progress)
	// OnImagesHit, when set, is given the images a target's samples hit
	// for the first time, after the tick that captured them, for targets
	// whose symbols can be read only while they live
	// (target.ImageHitReporter: darwin), so that their symbols are read
	// before the target exits. It runs on the sampler's goroutine and
	// must not keep imgs (the images themselves it may keep).
	OnImagesHit func(pid int, imgs []*images.Image)
	// OnExit, when set, is told of each target that exited, after the
	// window holding its last samples was handed over; the sampler then
	// forgets the target. Closing it is the callee's business.
	OnExit func(target.Target)
	// Settled, when set, reports whether no process or thread was created
	// on the system since its last call, which Run makes once per tick.
	// While it does, kernel samples are drained as seldom as the targets
	// allow (their Options.Kernel.MaxDrainInterval); otherwise at least every
	// listEvery, so that a new thread or process is found within that.
	// Nil: as seldom as the targets allow, always.
	Settled func() bool
	// SpoolBytes, when positive, defers interning: samples are kept as
	// they come, up to about this many bytes, and their stacks interned
	// and counted when the window closes or the bound is reached (spool).
	// A recording sets it, so that this work falls after the command ran.
	SpoolBytes int
	// Timeline, when positive, keeps the time of every sample, in the
	// order counted, up to this many (profile.Window.Timeline), for
	// timeline views; 16 bytes each.
	Timeline int
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
	// cfiStacks holds the interned stacks walked with unwind tables
	// (profile.Stack.CFI), forgotten when the interner evicts them.
	cfiStacks map[intern.StackID]struct{}
	tids      []target.ThreadID
	hitImgs   []*images.Image // scratch for reportImageHits
	// ending: the run's last tick, which lists every target's threads.
	ending bool
	// drains decides the ticks' timing while kernel samples are drained.
	drains drainPolicy

	// The tick's batch: threads to capture and how many samples each
	// stands for; the Capture buffers are reused from tick to tick.
	batchIDs   []target.ThreadID
	batchN     []int64
	batchState []*threadState
	batchCaps  []*target.Capture
	batchErrs  []error
	// Captures for samples drained from a SampleDrainer, reused.
	drainCaps []*target.Capture

	// unseenState is the thread that CPU time no listed thread used is
	// counted on (unseenThread).
	unseenState threadState

	// spool keeps samples to intern later (Config.SpoolBytes); nil
	// interns them at once.
	spool *spool
	// wake makes Run tick at once (Wake).
	wake chan struct{}
	// tfd is Run's tick timer while it runs on Linux, which Wake and
	// DrainSoon fire after their signal.
	tfd atomic.Pointer[tickFD]

	win        *windowState
	hadTargets bool
	// lateTicks counts the ticks the loop skipped, late, in wall mode:
	// each thread's next count stands for them too (wallSamples).
	lateTicks int64
	// wallListed is how many threads the last tick listed, in wall mode:
	// each tick skipped late was due a sample of each (Stats.WallDue).
	wallListed int64
	// now is the time of the tick (Unix nanoseconds) while a timeline is
	// kept: the time of the samples that bring none of their own.
	now       int64
	total     int64
	startTime time.Time
}

// targetState is what the sampler keeps of one target between ticks.
type targetState struct {
	t       target.Target
	threads map[target.ThreadID]*threadState
	exited  bool
	exe     string
	ticks   int64 // ticks this target has been sampled in
	// lastTick is the number of the last tick that listed its threads,
	// listedAt its time.
	lastTick int64
	listedAt time.Time
	images   *images.Set   // the last image set read, kept after exit
	imgAt    time.Time     // when images was last read
	imgEvery time.Duration // how long after imgAt they are read again
	addedAt  time.Time     // when the sampler took the target on
	// mapped: its backend told of code it may have mapped (idlePoll):
	// its images are read at the next tick whatever imgEvery says.
	mapped bool
	// drainer is the target as a SampleDrainer, when its kernel samples
	// are on (cpu mode).
	drainer target.SampleDrainer
	// loss is the drainer as a SampleLossReporter, when it is one.
	loss target.SampleLossReporter
	// watcher is the drainer as a ThreadWatcher, when it is one.
	watcher target.ThreadWatcher
	// keeper is the drainer as a SampleKeeper, when it is one: while it
	// keeps the samples, ticks neither list nor drain the target.
	keeper target.SampleKeeper
	// fresh: the process started since sampling began (AddStarted).
	fresh bool
	// ringWait is when the target's last listing found a thread that
	// used CPU time but is not sampled by the kernel yet (zero when
	// none): ticks stay a period apart a while for its first capture
	// (drainPolicy.next).
	ringWait time.Time
	// carry is CPU time no listed thread used (unseen) and not yet
	// counted as a whole sample, less what settled threads' samples
	// counted ahead of their CPU time read; rest is what settled threads
	// left of a period, counted on the stack of the one that makes it
	// whole.
	carry, rest time.Duration
	// seenCPU is the CPU time the target's listed threads used, all told;
	// proc reads the whole process's (nil: the target cannot tell), and
	// procBase and unseen are its first reading and what of it was put
	// in carry as used by no listed thread.
	seenCPU  time.Duration
	proc     target.ProcessCPUReporter
	procRead bool
	procBase time.Duration
	unseen   time.Duration
}

// threadState is what the sampler keeps of one thread between ticks.
type threadState struct {
	lastCPU   time.Duration
	pending   time.Duration  // CPU time used but not yet counted as samples
	lastStack intern.StackID // spooledStack: the last in the spool
	hasStack  bool
	// spooledID is the StackID its spooled samples were last counted on,
	// while the spool is flushed; spoolIdx is one more than its entry in
	// the spool's threads (0: none).
	spooledID intern.StackID
	spoolIdx  int32
	name      string
	seenTick  int64
	// pid is the process of its last sample when not its target's (a
	// descendant's thread sampled through the target's events: 0 else),
	// gen the window's number of that sample's image set (0: the
	// target's current images).
	pid int
	gen uint32
	// drained: its kernel samples were drained at the last listing, so
	// ticks that only drain (drainOnly) drain it too.
	drained bool
	// captured: captured at the last listing, which may have started its
	// kernel samples (a backend starts them at a thread's first capture):
	// the next tick that only drains tries it too, or its samples would
	// wait for the next listing, up to quietListEvery, in a buffer that
	// holds less.
	captured bool
	// ranAt is the last listing that found its CPU time grown or it
	// runnable (or first saw it with CPU time to count): zero if none.
	ranAt time.Time
	// unaccounted is the whole periods of pending, beyond one, that no
	// kernel sample or reported loss accounted for at its last listing.
	unaccounted int64
	// lateSeen is the Sampler's lateTicks when it was last counted in
	// wall mode (or first seen).
	lateSeen int64
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

		cfiStacks: map[intern.StackID]struct{}{},
		wake:      make(chan struct{}, 1),
		drains:    newDrainPolicy(cfg, time.Second/time.Duration(cfg.Hz)),
	}
	if cfg.SpoolBytes > 0 {
		s.spool = &spool{limit: cfg.SpoolBytes, timed: cfg.Timeline > 0}
		s.spool.warmUp()
	}
	in.OnEvict(s.keepEvicted)
	return s, nil
}

// Wake makes Run tick at once rather than at its next deadline; it may be
// called from any goroutine. A caller that learns of a target's exit calls
// it, so that the run ends without waiting for a drain up to a second away.
func (s *Sampler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
	if tfd := s.tfd.Load(); tfd != nil {
		tfd.kick()
	}
}

// Period returns the sampling interval.
func (s *Sampler) Period() time.Duration { return s.period }
