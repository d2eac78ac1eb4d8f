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
// samples.
type spool struct {
	limit, bytes int
	entries      [][]spooled // chunks of spoolEntryChunk, all full but the last
	pcs          [][]uint64  // chunks of the addresses of entries
	threads      []spoolThread
	// recent holds where the addresses of stacks spooled since the last
	// flush are, by their hash: a stack spooled again (most samples
	// repeat one) points at them rather than copying them, which at
	// 999 Hz was most of what the spool grew by, a page fault a page.
	recent [spoolRecent]spoolRef
}

// spoolRef is where a spooled stack's addresses are: pcs[chunk][off:off+n-1]
// (n 0: none).
type spoolRef struct {
	hash       uint64
	chunk, off int32
	n          int32
}

// spoolRecent is how many stacks spoolRef remembers, one per hash modulo it.
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
// stack pcs[chunk][off:off+len] (hashed by the walk), or, with len -1, on
// the last stack spooled or counted for the thread before it.
type spooled struct {
	hash           uint64
	n              int64
	at             int64 // Unix nanoseconds, when a timeline is kept
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

// add appends an entry, in the last chunk or a new one.
func (sp *spool) add(e spooled) {
	if k := len(sp.entries); k == 0 || len(sp.entries[k-1]) == cap(sp.entries[k-1]) {
		sp.entries = append(sp.entries, make([]spooled, 0, spoolEntryChunk))
	}
	last := &sp.entries[len(sp.entries)-1]
	*last = append(*last, e)
	sp.bytes += int(unsafe.Sizeof(e))
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

// stackPCs returns where pcs, a stack of hash hash, is in the spool:
// where it was spooled since the last flush, if it is among the recent
// ones, else where they are copied to.
func (sp *spool) stackPCs(pcs []uint64, hash uint64) (chunk, off int32) {
	r := &sp.recent[hash%spoolRecent]
	if r.n == int32(len(pcs))+1 && r.hash == hash && slices.Equal(sp.pcs[r.chunk][r.off:r.off+r.n-1], pcs) {
		return r.chunk, r.off
	}
	chunk, off = sp.addPCs(pcs)
	*r = spoolRef{hash: hash, chunk: chunk, off: off, n: int32(len(pcs)) + 1}
	return chunk, off
}

// spoolStack keeps n samples of a thread on the stack pcs, to be interned
// at the next flush, and makes it the thread's last stack.
func (s *Sampler) spoolStack(pid int, tid target.ThreadID, th *threadState, pcs []uint64, hash uint64, truncated, cfi bool, n, at int64) {
	sp := s.spool
	chunk, off := sp.stackPCs(pcs, hash)
	sp.add(spooled{hash: hash, n: n, at: at, thread: sp.thread(pid, tid, th), chunk: chunk, off: off, len: int32(len(pcs)), truncated: truncated, cfi: cfi})
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
	sp.add(spooled{n: n, at: at, thread: sp.thread(pid, tid, th), len: -1})
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
	for _, chunk := range sp.entries {
		for i := range chunk {
			e := &chunk[i]
			t := &sp.threads[e.thread]
			if e.len >= 0 {
				pcs := sp.pcs[e.chunk][e.off : e.off+e.len]
				id := s.interns.InternHashed(pcs, e.hash, e.truncated)
				if e.cfi {
					if _, ok := s.cfiStacks[id]; !ok {
						s.cfiStacks[id] = struct{}{}
					}
				}
				t.th.spooledID = id
			}
			s.countAs(t.pid, t.gen, t.tid, t.name, t.th.spooledID, e.n, e.at)
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
	for i := range sp.pcs {
		sp.pcs[i] = sp.pcs[i][:0]
	}
	// add and addPCs fill the last chunk: the rest go to the collector.
	sp.entries, sp.pcs = sp.entries[:1], sp.pcs[:min(1, len(sp.pcs))]
	sp.bytes = 0
	clear(sp.recent[:])
}
