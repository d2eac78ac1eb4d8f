package sampler

import (
	"sort"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/intern"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
)

// sampleKey is what a window counts samples by: gen tells apart the image
// sets one process had in turn (windowState.gens; 0: its target's current
// images), and name the names a thread had in turn, so that each sample
// keeps the name in force when it was counted, as perf report's comm does.
type sampleKey struct {
	pid   int
	gen   uint32
	tid   target.ThreadID
	stack intern.StackID
	name  string
}

// genKey is one image set of one process that samples were taken under.
type genKey struct {
	pid int
	set *images.Set
}

// maxGens bounds the image sets a window tells apart; samples under sets
// past it are counted with their target's current images.
const maxGens = 4096

// sampleCount is the samples a window counted of one sampleKey.
type sampleCount struct {
	key sampleKey
	n   int64
	at  int32 // its index in windowState.counts before they are sorted
}

// windowState is the open window: counts and costs since it began.
type windowState struct {
	start time.Time
	// counts holds the window's counts; index finds a key's: one map
	// lookup a sample.
	counts   []sampleCount
	index    map[sampleKey]int32
	missed   map[profile.MissReason]int64
	stops    stopHistogram
	ticks    int64
	missedT  int64
	captures int64
	wallDue  int64 // profile.Stats.WallDue
	cpuStart time.Duration
	// used marks stacks counted in this window; evicted keeps copies of
	// used stacks the interner evicted before the window closed.
	used    map[intern.StackID]struct{}
	evicted map[intern.StackID]profile.Stack
	// gens numbers, from 1, the image sets samples came with
	// (target.Capture.Images), and genProcs describes each, in order.
	gens     map[genKey]uint32
	genProcs []profile.Process
	// timeline holds the samples in the order counted (Config.Timeline).
	timeline timeline
	// sampleOf maps a count (its index before the sort) to its sample in
	// the closed window, -1 for none (addSamples).
	sampleOf []int32
}

func (s *Sampler) newWindow(start time.Time) *windowState {
	return &windowState{
		start:    start,
		index:    map[sampleKey]int32{},
		missed:   map[profile.MissReason]int64{},
		used:     map[intern.StackID]struct{}{},
		evicted:  map[intern.StackID]profile.Stack{},
		gens:     map[genKey]uint32{},
		cpuStart: selfCPU(),
	}
}

// keepEvicted is the interner's OnEvict: the open window keeps the
// addresses of a stack it counted, so that its samples are not lost.
func (s *Sampler) keepEvicted(id intern.StackID, pcs []uint64, truncated bool) {
	_, cfi := s.cfiStacks[id]
	delete(s.cfiStacks, id)
	if w := s.win; w != nil {
		if _, used := w.used[id]; used {
			w.evicted[id] = profile.Stack{PCs: pcs, Truncated: truncated, CFI: cfi}
		}
	}
}

// internAndCount records a successful capture of a thread: its stop time,
// and n samples on its stack, interned, which becomes the thread's last.
func (s *Sampler) internAndCount(pid int, tid target.ThreadID, th *threadState, c *target.Capture, n int64) {
	w := s.win
	w.captures++
	w.stops.add(c.Stopped)
	if c.ThreadName != "" {
		// A sample drained later than taken: the name it was taken
		// under, which its thread keeps until Info or a later one says
		// otherwise. Cleared: the Capture is reused for other threads.
		th.name, c.ThreadName = c.ThreadName, ""
	}
	if len(c.PCs) == 0 {
		w.missed[profile.MissEmptyStack]++
		return
	}
	// The thread's stack from now on belongs to the process and images
	// the sample came with: a descendant's, or those of before an exec.
	th.pid, th.gen = 0, 0
	if c.PID > 0 && c.PID != pid {
		th.pid, pid = c.PID, c.PID
	}
	if c.Images != nil {
		th.gen = s.genOf(pid, c.Images, c.Executable)
	}
	at := s.now
	if s.cfg.Timeline > 0 && !c.Time.IsZero() {
		at = c.Time.UnixNano()
	}
	if s.spool != nil {
		s.spoolStack(pid, tid, th, c.PCs, c.Walk.Hash, c.Walk.Stop.Truncated(), c.Walk.CFIFrames > 0, n, at)
		return
	}
	// The walk hashed the addresses as it read them; a capture that was
	// not walked here has Hash 0 and is hashed now.
	id := s.interns.InternHashed(c.PCs, c.Walk.Hash, c.Walk.Stop.Truncated())
	if c.Walk.CFIFrames > 0 {
		if _, ok := s.cfiStacks[id]; !ok { // a lookup costs less than an assignment
			s.cfiStacks[id] = struct{}{}
		}
	}
	th.lastStack, th.hasStack = id, true
	s.countAt(pid, tid, th, id, n, at)
}

// count adds n samples of a thread on an interned stack to the window, or
// to the spool when that stack waits there, at the time of the tick.
func (s *Sampler) count(pid int, tid target.ThreadID, th *threadState, id intern.StackID, n int64) {
	s.countAt(pid, tid, th, id, n, s.now)
}

// countAt is count for samples taken at time at (Unix nanoseconds, for the
// timeline). A thread whose last sample came with a process or images of
// its own counts them under those.
func (s *Sampler) countAt(pid int, tid target.ThreadID, th *threadState, id intern.StackID, n, at int64) {
	if th.pid > 0 {
		pid = th.pid
	}
	if id == spooledStack {
		s.spoolRepeat(pid, tid, th, n, at)
		return
	}
	s.total += n
	s.countAs(pid, th.gen, tid, th.name, id, n, at)
}

// genOf returns the number the open window gives process pid's image set
// set (exe its executable), numbering it if new; 0 once maxGens are.
func (s *Sampler) genOf(pid int, set *images.Set, exe string) uint32 {
	w := s.win
	k := genKey{pid: pid, set: set}
	if g, ok := w.gens[k]; ok {
		return g
	}
	if len(w.genProcs) >= maxGens {
		return 0
	}
	w.genProcs = append(w.genProcs, profile.Process{PID: pid, Gen: len(w.genProcs) + 1, Executable: exe, Images: set})
	w.gens[k] = uint32(len(w.genProcs))
	return uint32(len(w.genProcs))
}

// countAs adds n samples of a thread, named name, on an interned stack to
// the window, under image set gen of its process, and to its timeline, if
// kept, at time at. The name is part of the key (hashed, not copied: no
// allocation), so a thread that renames itself has its samples split by name.
func (s *Sampler) countAs(pid int, gen uint32, tid target.ThreadID, name string, id intern.StackID, n, at int64) {
	k := sampleKey{pid: pid, gen: gen, tid: tid, stack: id, name: name}
	w := s.win
	i, ok := w.index[k]
	if ok {
		w.counts[i].n += n
	} else {
		i = int32(len(w.counts))
		w.index[k] = i
		w.counts = append(w.counts, sampleCount{key: k, n: n, at: i})
		w.used[id] = struct{}{}
	}
	if s.cfg.Timeline > 0 {
		w.timeline.add(s.cfg.Timeline, at, i, n)
	}
}

// closeWindow builds the Window from the counts and hands it over.
func (s *Sampler) closeWindow(end time.Time) {
	// Threads gone since the last sweep are counted in this window.
	for _, ts := range s.targets {
		if !ts.exited {
			s.forgetGone(ts)
		}
	}
	s.flushSpool()
	ws := s.win
	w := &profile.Window{
		Start:  ws.start,
		End:    end,
		Period: s.period,
		Mode:   s.cfg.Mode,
		Missed: ws.missed,
	}
	s.addSamples(w, ws)
	for _, ts := range s.targets {
		if !ts.exited {
			ts.refreshImages()
		}
		w.Processes = append(w.Processes, profile.Process{PID: ts.t.PID(), Executable: ts.exe, Images: ts.images})
	}
	w.Processes = append(w.Processes, ws.genProcs...)
	w.Stats = profile.Stats{
		Ticks:        ws.ticks,
		MissedTicks:  ws.missedT,
		Captures:     ws.captures,
		WallDue:      ws.wallDue,
		StoppedP50:   ws.stops.quantile(0.50),
		StoppedP99:   ws.stops.quantile(0.99),
		StoppedMax:   ws.stops.max,
		StoppedTotal: ws.stops.sum,
		ProfilerCPU:  selfCPU() - ws.cpuStart,
	}
	w.Stats.StopBuckets = ws.stops.nonEmpty()
	w.Timeline, w.TimelineDropped = ws.timeline.entries(ws.sampleOf), ws.timeline.dropped
	if s.cfg.OnWindow != nil {
		s.cfg.OnWindow(w)
	}
	s.forgetExited()
}

// addSamples fills w's Stacks and Samples from the counts of ws, sorted by
// process, thread and stack; a stack that was evicted and not kept counts
// as missed.
func (s *Sampler) addSamples(w *profile.Window, ws *windowState) {
	stackIndex := map[intern.StackID]int{}
	counts := ws.counts
	if s.cfg.Timeline > 0 {
		ws.sampleOf = make([]int32, len(counts))
		for i := range ws.sampleOf {
			ws.sampleOf[i] = -1
		}
	}
	sort.Slice(counts, func(i, j int) bool {
		a, b := counts[i].key, counts[j].key
		if a.pid != b.pid {
			return a.pid < b.pid
		}
		if a.gen != b.gen {
			return a.gen < b.gen
		}
		if a.tid != b.tid {
			return a.tid < b.tid
		}
		if a.stack != b.stack {
			return a.stack < b.stack
		}
		return a.name < b.name
	})
	for _, c := range counts {
		k := c.key
		idx, ok := stackIndex[k.stack]
		if r := lostReason(k.stack); !ok && (k.stack == unsampledStack || r != profile.NotLost) {
			idx = len(w.Stacks)
			w.Stacks = append(w.Stacks, profile.Stack{Unsampled: r == profile.NotLost, Lost: r})
			stackIndex[k.stack] = idx
		} else if !ok {
			pcs, truncated, found := s.interns.Lookup(k.stack)
			_, cfi := s.cfiStacks[k.stack]
			if !found {
				st, kept := ws.evicted[k.stack]
				if !kept {
					w.Missed[profile.MissStackEvicted] += c.n
					continue
				}
				pcs, truncated, cfi = st.PCs, st.Truncated, st.CFI
			}
			idx = len(w.Stacks)
			w.Stacks = append(w.Stacks, profile.Stack{PCs: append([]uint64(nil), pcs...), Truncated: truncated, CFI: cfi})
			stackIndex[k.stack] = idx
		}
		if ws.sampleOf != nil {
			ws.sampleOf[c.at] = int32(len(w.Samples))
		}
		w.Samples = append(w.Samples, profile.Sample{Stack: idx, PID: k.pid, Gen: int(k.gen), Thread: k.tid, ThreadName: k.name, Count: c.n})
	}
}
