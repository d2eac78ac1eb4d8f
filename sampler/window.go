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

// windowState is the open window: counts and costs since it began.
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
	// The walk hashed the addresses as it read them; a capture that was
	// not walked here has Hash 0 and is hashed now.
	id := s.interns.InternHashed(c.PCs, c.Walk.Hash, c.Walk.Stop.Truncated())
	if c.Walk.CFIFrames > 0 {
		s.cfiStacks[id] = struct{}{}
	}
	th.lastStack, th.hasStack = id, true
	s.count(pid, tid, th, id, n)
}

// count adds n samples of a thread on an interned stack to the window.
func (s *Sampler) count(pid int, tid target.ThreadID, th *threadState, id intern.StackID, n int64) {
	k := sampleKey{pid: pid, tid: tid, stack: id}
	s.win.counts[k] += n
	s.total += n
	if _, ok := s.win.names[k]; !ok {
		s.win.names[k] = th.name
		s.win.used[id] = struct{}{}
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
					w.Missed[profile.MissStackEvicted] += ws.counts[k]
					continue
				}
				pcs, truncated, cfi = st.PCs, st.Truncated, st.CFI
			}
			idx = len(w.Stacks)
			w.Stacks = append(w.Stacks, profile.Stack{PCs: append([]uint64(nil), pcs...), Truncated: truncated, CFI: cfi})
			stackIndex[k.stack] = idx
		}
		w.Samples = append(w.Samples, profile.Sample{Stack: idx, PID: k.pid, Thread: k.tid, ThreadName: ws.names[k], Count: ws.counts[k]})
	}
}
