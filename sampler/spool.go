package sampler

import (
	"math"
	"unsafe"

	"github.com/macprof/macprof/intern"
	"github.com/macprof/macprof/target"
)

// spool keeps samples as they were taken, their stacks not yet interned
// (Config.SpoolBytes): interning and counting is most of what a drain
// costs, and a recording can do it once the command has run, as perf
// record leaves it to perf report. Samples are interned and counted, in
// the order they came, when the window closes or the spool is full.
type spool struct {
	limit   int // bytes
	entries []spooled
	pcs     []uint64 // the stacks of entries, one after another
}

// spooled is one sample in the spool: n samples of a thread on the stack
// pcs[off:end] (hashed by the walk), or, with repeat, on the last stack
// spooled or counted for the thread before it.
type spooled struct {
	th             *threadState
	pid            int
	tid            target.ThreadID
	name           string
	n              int64
	hash           uint64
	off, end       int
	truncated, cfi bool
	repeat         bool
}

// spooledStack is the StackID a thread's last stack has while it waits in
// the spool; the interner never issues it (it counts up from 1, and
// unsampledStack is the one above).
const spooledStack = intern.StackID(math.MaxUint64 - 1)

// full reports whether the spool holds its limit's worth.
func (sp *spool) full() bool {
	return len(sp.entries)*int(unsafe.Sizeof(spooled{}))+8*len(sp.pcs) >= sp.limit
}

// spoolStack keeps n samples of a thread on the stack pcs, to be interned
// at the next flush, and makes it the thread's last stack.
func (s *Sampler) spoolStack(pid int, tid target.ThreadID, th *threadState, pcs []uint64, hash uint64, truncated, cfi bool, n int64) {
	sp := s.spool
	off := len(sp.pcs)
	sp.pcs = append(sp.pcs, pcs...)
	sp.entries = append(sp.entries, spooled{th: th, pid: pid, tid: tid, name: th.name, n: n, hash: hash, off: off, end: len(sp.pcs), truncated: truncated, cfi: cfi})
	th.lastStack, th.hasStack = spooledStack, true
	s.total += n
	if sp.full() {
		s.flushSpool()
	}
}

// spoolRepeat keeps n samples of a thread on its last stack, which waits in
// the spool.
func (s *Sampler) spoolRepeat(pid int, tid target.ThreadID, th *threadState, n int64) {
	sp := s.spool
	sp.entries = append(sp.entries, spooled{th: th, pid: pid, tid: tid, name: th.name, n: n, repeat: true})
	s.total += n
	if sp.full() {
		s.flushSpool()
	}
}

// flushSpool interns and counts the spooled samples in the order they came
// into the open window, and gives their threads the StackIDs of their last
// stacks. The spool keeps its memory for the next samples.
func (s *Sampler) flushSpool() {
	sp := s.spool
	if sp == nil || len(sp.entries) == 0 {
		return
	}
	for i := range sp.entries {
		e := &sp.entries[i]
		if !e.repeat {
			id := s.interns.InternHashed(sp.pcs[e.off:e.end], e.hash, e.truncated)
			if e.cfi {
				if _, ok := s.cfiStacks[id]; !ok {
					s.cfiStacks[id] = struct{}{}
				}
			}
			e.th.spooledID = id
		}
		s.countAs(e.pid, e.tid, e.name, e.th.spooledID, e.n)
	}
	for i := range sp.entries {
		if th := sp.entries[i].th; th.lastStack == spooledStack {
			th.lastStack = th.spooledID
		}
	}
	clear(sp.entries) // drop the thread pointers and names
	sp.entries, sp.pcs = sp.entries[:0], sp.pcs[:0]
}
