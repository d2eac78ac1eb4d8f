package sampler

import (
	"math"
	"slices"
	"unsafe"

	"github.com/macprof/macprof/intern"
	"github.com/macprof/macprof/target"
)

// spool keeps samples as they were taken, their stacks not yet interned
// (Config.SpoolBytes): interning and counting is most of what a drain
// costs, and a recording can do it once the command has run, as perf
// record leaves it to perf report. Samples are interned and counted, in
// the order they came, when the window closes or the spool is full.
//
// Entries and addresses are kept in fixed-size chunks without pointers:
// appending never copies what is there, and the garbage collector does
// not scan them. A flush keeps the first chunk of each for the next
// samples. Each entry holds its stack's first address; the callers,
// which most samples share with a recent one while their leaves differ,
// are copied once (recent): at 999 Hz the copies were most of what the
// spool grew by, each new page of it a page fault.
type spool struct {
	limit, bytes int
	entries      [][]spooled // chunks of spoolEntryChunk, all full but the last
	times        [][]int64   // with timed, the entries' times, chunk by chunk
	pcs          [][]uint64  // chunks of the callers of entries
	threads      []spoolThread
	timed        bool // a timeline is kept: entries have times
	// recent holds where callers spooled since the last flush are, by
	// their hash (callersHash).
	recent [spoolRecent]spoolRef
	// stack is where a flush puts a stack back together.
	stack []uint64
}

// spoolRef is where spooled callers are: pcs[chunk][off:off+n-1] (n 0:
// none).
type spoolRef struct {
	hash       uint64
	chunk, off int32
	n          int32
}

// spoolRecent is how many callers spoolRef remembers, one per hash modulo
// it.
const spoolRecent = 256

// spoolThread is a thread that samples in the spool belong to, under the
// name it had then.
type spoolThread struct {
	th   *threadState
	pid  int
	gen  uint32
	tid  target.ThreadID
	name string
}

// spooled is one sample in the spool: n samples of threads[thread] on the
// stack of len addresses leaf, then pcs[chunk][off:off+len-1] (hashed by
// the walk), or, with len -1, on the last stack spooled or counted for the
// thread before it.
type spooled struct {
	hash           uint64
	leaf           uint64
	n              int64
	thread         int32
	chunk, off     int32
	len            int32
	truncated, cfi bool
}

// The chunk sizes: 512 KiB of addresses, 64 Ki entries.
const (
	spoolPCChunk    = 1 << 16
	spoolEntryChunk = 1 << 16
)

// spooledStack is the StackID a thread's last stack has while it waits in
// the spool; the interner never issues it (it counts up from 1, and
// unsampledStack is the one above).
const spooledStack = intern.StackID(math.MaxUint64 - 1)

// thread returns the index of the spool's entry for th under its current
// name, process and images, adding one if needed.
func (sp *spool) thread(pid int, tid target.ThreadID, th *threadState) int32 {
	if i := th.spoolIdx - 1; i >= 0 && int(i) < len(sp.threads) {
		if e := &sp.threads[i]; e.th == th && e.name == th.name && e.pid == pid && e.gen == th.gen {
			return i
		}
	}
	sp.threads = append(sp.threads, spoolThread{th: th, pid: pid, gen: th.gen, tid: tid, name: th.name})
	th.spoolIdx = int32(len(sp.threads))
	return th.spoolIdx - 1
}

// add appends an entry, taken at at when the spool is timed, in the last
// chunk or a new one.
func (sp *spool) add(e spooled, at int64) {
	if k := len(sp.entries); k == 0 || len(sp.entries[k-1]) == cap(sp.entries[k-1]) {
		sp.entries = append(sp.entries, make([]spooled, 0, spoolEntryChunk))
		if sp.timed {
			sp.times = append(sp.times, make([]int64, 0, spoolEntryChunk))
		}
	}
	last := &sp.entries[len(sp.entries)-1]
	*last = append(*last, e)
	sp.bytes += int(unsafe.Sizeof(e))
	if sp.timed {
		t := &sp.times[len(sp.times)-1]
		*t = append(*t, at)
		sp.bytes += 8
	}
}

// addPCs copies pcs into the last chunk of addresses, or a new one, and
// returns where.
func (sp *spool) addPCs(pcs []uint64) (chunk, off int32) {
	k := len(sp.pcs)
	if k == 0 || cap(sp.pcs[k-1])-len(sp.pcs[k-1]) < len(pcs) {
		sp.pcs = append(sp.pcs, make([]uint64, 0, max(spoolPCChunk, len(pcs))))
		k++
	}
	last := &sp.pcs[k-1]
	off = int32(len(*last))
	*last = append(*last, pcs...)
	sp.bytes += 8 * len(pcs)
	return int32(k - 1), off
}

// callersHash hashes the callers of a stack for recent.
func callersHash(callers []uint64) uint64 {
	h := uint64(len(callers))
	for _, pc := range callers {
		h = (h ^ pc) * 0x9e3779b97f4a7c15
	}
	return h ^ h>>29
}

// callersAt returns where callers are in the spool: where they were
// spooled since the last flush, if they are among the recent ones, else
// where they are copied to.
func (sp *spool) callersAt(callers []uint64) (chunk, off int32) {
	hash := callersHash(callers)
	r := &sp.recent[hash%spoolRecent]
	if r.n == int32(len(callers))+1 && r.hash == hash && slices.Equal(sp.pcs[r.chunk][r.off:r.off+r.n-1], callers) {
		return r.chunk, r.off
	}
	chunk, off = sp.addPCs(callers)
	*r = spoolRef{hash: hash, chunk: chunk, off: off, n: int32(len(callers)) + 1}
	return chunk, off
}

// spoolStack keeps n samples of a thread on the stack pcs, to be interned
// at the next flush, and makes it the thread's last stack.
func (s *Sampler) spoolStack(pid int, tid target.ThreadID, th *threadState, pcs []uint64, hash uint64, truncated, cfi bool, n, at int64) {
	sp := s.spool
	e := spooled{hash: hash, n: n, thread: sp.thread(pid, tid, th), len: int32(len(pcs)), truncated: truncated, cfi: cfi}
	if len(pcs) > 0 {
		e.leaf = pcs[0]
		e.chunk, e.off = sp.callersAt(pcs[1:])
	}
	sp.add(e, at)
	th.lastStack, th.hasStack = spooledStack, true
	s.total += n
	if sp.bytes >= sp.limit {
		s.flushSpool()
	}
}

// spoolRepeat keeps n samples of a thread on its last stack, which waits in
// the spool.
func (s *Sampler) spoolRepeat(pid int, tid target.ThreadID, th *threadState, n, at int64) {
	sp := s.spool
	sp.add(spooled{n: n, thread: sp.thread(pid, tid, th), len: -1}, at)
	s.total += n
	if sp.bytes >= sp.limit {
		s.flushSpool()
	}
}

// flushSpool interns and counts the spooled samples in the order they came
// into the open window, and gives their threads the StackIDs of their last
// stacks. The spool keeps its first chunks for the next samples.
func (s *Sampler) flushSpool() {
	sp := s.spool
	if sp == nil || len(sp.entries) == 0 {
		return
	}
	for c, chunk := range sp.entries {
		for i := range chunk {
			e := &chunk[i]
			t := &sp.threads[e.thread]
			if e.len >= 0 {
				pcs := sp.stack[:0]
				if e.len > 0 {
					pcs = append(append(pcs, e.leaf), sp.pcs[e.chunk][e.off:e.off+e.len-1]...)
				}
				sp.stack = pcs
				id := s.interns.InternHashed(pcs, e.hash, e.truncated)
				if e.cfi {
					if _, ok := s.cfiStacks[id]; !ok {
						s.cfiStacks[id] = struct{}{}
					}
				}
				t.th.spooledID = id
			}
			var at int64
			if sp.timed {
				at = sp.times[c][i]
			}
			s.countAs(t.pid, t.gen, t.tid, t.name, t.th.spooledID, e.n, at)
		}
	}
	for _, t := range sp.threads {
		if t.th.lastStack == spooledStack {
			t.th.lastStack = t.th.spooledID
		}
		t.th.spoolIdx = 0
	}
	clear(sp.threads) // drop the pointers and names
	sp.threads = sp.threads[:0]
	for i := range sp.entries {
		sp.entries[i] = sp.entries[i][:0]
	}
	for i := range sp.times {
		sp.times[i] = sp.times[i][:0]
	}
	for i := range sp.pcs {
		sp.pcs[i] = sp.pcs[i][:0]
	}
	// add and addPCs fill the last chunk: the rest go to the collector.
	sp.entries, sp.times, sp.pcs = sp.entries[:1], sp.times[:min(1, len(sp.times))], sp.pcs[:min(1, len(sp.pcs))]
	sp.bytes = 0
	clear(sp.recent[:])
}
