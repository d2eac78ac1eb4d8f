package sampler

import (
	"sort"
	"time"

	"github.com/macprof/macprof/intern"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
)

// sampleKey is what a window counts samples by.
type sampleKey struct {
	pid   int
	tid   target.ThreadID
	stack intern.StackID
}

// sampleCount is the samples a window counted of one sampleKey, and the
// thread's name at the first of them.
type sampleCount struct {
	key  sampleKey
	n    int64
	name string
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
	cpuStart time.Duration
	// used marks stacks counted in this window; evicted keeps copies of
	// used stacks the interner evicted before the window closed.
	used    map[intern.StackID]struct{}
	evicted map[intern.StackID]profile.Stack
}

func (s *Sampler) newWindow(start time.Time) *windowState {
	return &windowState{
		start:    start,
		index:    map[sampleKey]int32{},
		missed:   map[profile.MissReason]int64{},
		used:     map[intern.StackID]struct{}{},
		evicted:  map[intern.StackID]profile.Stack{},
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
	if len(c.PCs) == 0 {
		w.missed[profile.MissEmptyStack]++
		return
	}
	if s.spool != nil {
		s.spoolStack(pid, tid, th, c.PCs, c.Walk.Hash, c.Walk.Stop.Truncated(), c.Walk.CFIFrames > 0, n)
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
	s.count(pid, tid, th, id, n)
}

// count adds n samples of a thread on an interned stack to the window, or
// to the spool when that stack waits there.
func (s *Sampler) count(pid int, tid target.ThreadID, th *threadState, id intern.StackID, n int64) {
	if id == spooledStack {
		s.spoolRepeat(pid, tid, th, n)
		return
	}
	s.total += n
	s.countAs(pid, tid, th.name, id, n)
}

// countAs adds n samples of a thread, named name, on an interned stack to
// the window.
func (s *Sampler) countAs(pid int, tid target.ThreadID, name string, id intern.StackID, n int64) {
	k := sampleKey{pid: pid, tid: tid, stack: id}
	w := s.win
	if i, ok := w.index[k]; ok {
		w.counts[i].n += n
		return
	}
	w.index[k] = int32(len(w.counts))
	w.counts = append(w.counts, sampleCount{key: k, n: n, name: name})
	w.used[id] = struct{}{}
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
	s.forgetExited()
}

// addSamples fills w's Stacks and Samples from the counts of ws, sorted by
// process, thread and stack; a stack that was evicted and not kept counts
// as missed.
func (s *Sampler) addSamples(w *profile.Window, ws *windowState) {
	stackIndex := map[intern.StackID]int{}
	counts := ws.counts
	sort.Slice(counts, func(i, j int) bool {
		a, b := counts[i].key, counts[j].key
		if a.pid != b.pid {
			return a.pid < b.pid
		}
		if a.tid != b.tid {
			return a.tid < b.tid
		}
		return a.stack < b.stack
	})
	for _, c := range counts {
		k := c.key
		idx, ok := stackIndex[k.stack]
		if !ok && k.stack == unsampledStack {
			idx = len(w.Stacks)
			w.Stacks = append(w.Stacks, profile.Stack{Unsampled: true})
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
		w.Samples = append(w.Samples, profile.Sample{Stack: idx, PID: k.pid, Thread: k.tid, ThreadName: c.name, Count: c.n})
	}
}
