package sampler

import (
	"math"
	"os"
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
// Entries and stacks are kept in fixed-size chunks without pointers:
// appending never copies what is there, and the garbage collector does
// not scan them. A stack is appended as it came, its length then its
// addresses (spoolStacks), with no lookup of what is there: a drain comes
// a fraction of a second after the last, when any structure it would
// search is out of the caches, and at 999 Hz a search of the stacks kept
// so far cost a quarter of a drain. What appending costs instead is the
// memory it grows by, whose page faults are dearer than the writes: the
// first spoolWarmBytes are faulted in when the spool is made (before a
// launched command runs) and kept across flushes.
type spool struct {
	limit, bytes int
	entries      [][]spooled // chunks of spoolEntryChunk, all full but the last
	times        [][]int64   // with timed, the entries' times, chunk by chunk
	threads      []spoolThread
	timed        bool // a timeline is kept: entries have times
	stacks       spoolStacks
}

// spoolThread is a thread that samples in the spool belong to, under the
// name it had then.
type spoolThread struct {
	th   *threadState
	pid  int
	gen  uint32
	tid  target.ThreadID
	name string
	// last is the last stack spooled under this entry, whose outer
	// frames the next shares; a flush rebuilds the stacks in it. Its
	// memory is kept from flush to flush.
	last []uint64
}

// spooled is one sample in the spool: n samples of threads[thread] on the
// stack at stack&spoolStackMask in the spool's stacks, or, with that
// spoolRepeat, on the last stack spooled or counted for the thread before
// it; spoolTruncated and spoolCFI mark the walk's stack as truncated and
// walked with tables.
type spooled struct {
	hash   uint64
	n      int64
	stack  uint32
	thread int32
}

// The marks of spooled.stack.
const (
	spoolTruncated = 1 << 31
	spoolCFI       = 1 << 30
	spoolStackMask = spoolCFI - 1
	spoolRepeat    = spoolStackMask // a place spoolStacks never gives
)

// The chunk sizes: 64 Ki entries (1.5 MiB), 32 Ki words of stacks (256
// KiB); spoolWarmBytes of stacks and the first spoolWarmEntries entries
// are faulted in with the spool (bench/cbusy's 5 s at 999 Hz).
const (
	spoolEntryChunk  = 1 << 16
	spoolStackShift  = 15
	spoolStackChunk  = 1 << spoolStackShift
	spoolWarmBytes   = 1 << 20
	spoolWarmEntries = 10 << 10
)

// spoolStacks holds the spool's stacks, each at a place (chunk index <<
// spoolStackShift | word offset) where a word of how many outer frames it
// shares with the stack before it of its thread (high half) and how many
// it has besides (low half) is followed by those, first address first.
type spoolStacks struct {
	// chunks are filled in order: those before fill are full (or had no
	// room for the next stack), those after it empty.
	chunks [][]uint64
	fill   int
	// warm is how many of the first chunks were faulted in before use;
	// a reset keeps them.
	warm int
}

// spoolMaxChunks bounds the chunks below the places a spooled entry can
// hold (spoolRepeat excluded).
const spoolMaxChunks = spoolStackMask>>spoolStackShift - 1

// warmUp makes and faults in chunks of up to bytes in all, to be filled
// first.
func (st *spoolStacks) warmUp(bytes int) {
	for range min(bytes/(8*spoolStackChunk), spoolMaxChunks) {
		c := make([]uint64, spoolStackChunk)
		faultIn(c)
		st.chunks = append(st.chunks, c[:0])
	}
	st.warm = len(st.chunks)
}

// add appends the stack of the addresses pcs and shared outer frames of
// the stack before it and returns its place, or ok false when no chunk is
// left for it. A stack longer than a chunk gets a chunk of its own.
func (st *spoolStacks) add(pcs []uint64, shared int) (place uint32, ok bool) {
	need := 1 + len(pcs)
	for st.fill < len(st.chunks) {
		// A stack starts within the first spoolStackChunk words of
		// its chunk, where its place can say where.
		if c := st.chunks[st.fill]; len(c)+need <= spoolStackChunk || len(c) == 0 && cap(c) >= need {
			break
		}
		st.fill++
	}
	if st.fill == len(st.chunks) {
		if st.fill >= spoolMaxChunks {
			return 0, false
		}
		st.chunks = append(st.chunks, make([]uint64, 0, max(spoolStackChunk, need)))
	}
	c := &st.chunks[st.fill]
	place = uint32(st.fill)<<spoolStackShift | uint32(len(*c))
	*c = append(*c, uint64(shared)<<32|uint64(len(pcs)))
	*c = append(*c, pcs...)
	return place, true
}

// stack returns the addresses and shared outer frames of the stack at
// place, which add gave.
func (st *spoolStacks) stack(place uint32) (pcs []uint64, shared int) {
	c := st.chunks[place>>spoolStackShift]
	at := place & (spoolStackChunk - 1)
	w := c[at]
	return c[at+1 : at+1+uint32(w)], int(w >> 32)
}

// reset forgets every stack, keeping the warm chunks.
func (st *spoolStacks) reset() {
	for i := range st.chunks[:min(st.warm, len(st.chunks))] {
		st.chunks[i] = st.chunks[i][:0]
	}
	clear(st.chunks[st.warm:]) // to the collector
	st.chunks, st.fill = st.chunks[:st.warm], 0
}

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
	i := len(sp.threads)
	if i < cap(sp.threads) {
		sp.threads = sp.threads[:i+1] // its last kept from an earlier flush
	} else {
		sp.threads = append(sp.threads, spoolThread{})
	}
	e := &sp.threads[i]
	last := e.last[:0]
	if last == nil {
		last = make([]uint64, 0, 64) // deeper stacks grow it once
	}
	*e = spoolThread{th: th, pid: pid, gen: th.gen, tid: tid, name: th.name, last: last}
	th.spoolIdx = int32(len(sp.threads))
	return th.spoolIdx - 1
}

// warmUp faults in the first of the spool's memory, up to its limit: the
// stacks' first spoolWarmBytes and room for spoolWarmEntries entries, so
// that the first samples' page faults come before a launched command runs
// rather than while it does.
func (sp *spool) warmUp() {
	sp.stacks.warmUp(min(sp.limit, spoolWarmBytes))
	n := min(sp.limit/int(unsafe.Sizeof(spooled{})), spoolWarmEntries)
	if n <= 0 {
		return
	}
	c := make([]spooled, spoolEntryChunk)
	faultIn(c[:n])
	sp.entries = append(sp.entries, c[:0])
	if sp.timed {
		sp.times = append(sp.times, make([]int64, 0, spoolEntryChunk))
	}
}

// faultIn writes a zero value into each page of s, which faults the page
// in: a read alone would map the shared zero page.
func faultIn[T any](s []T) {
	var zero T
	step := max(1, os.Getpagesize()/int(unsafe.Sizeof(zero)))
	for i := 0; i < len(s); i += step {
		s[i] = zero
	}
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

// spoolStack keeps n samples of a thread on the stack pcs, to be interned
// at the next flush, and makes it the thread's last stack.
func (s *Sampler) spoolStack(pid int, tid target.ThreadID, th *threadState, pcs []uint64, hash uint64, truncated, cfi bool, n, at int64) {
	sp := s.spool
	ti := sp.thread(pid, tid, th)
	last := sp.threads[ti].last
	shared := 0
	for shared < len(last) && shared < len(pcs) && last[len(last)-1-shared] == pcs[len(pcs)-1-shared] {
		shared++
	}
	place, ok := sp.stacks.add(pcs[:len(pcs)-shared], shared)
	if !ok {
		s.flushSpool()
		ti, shared = sp.thread(pid, tid, th), 0
		place, _ = sp.stacks.add(pcs, 0)
	}
	sp.threads[ti].last = append(sp.threads[ti].last[:0], pcs...)
	sp.bytes += 8 * (1 + len(pcs) - shared)
	e := spooled{hash: hash, n: n, thread: ti, stack: place}
	if truncated {
		e.stack |= spoolTruncated
	}
	if cfi {
		e.stack |= spoolCFI
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
	sp.add(spooled{n: n, thread: sp.thread(pid, tid, th), stack: spoolRepeat}, at)
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
	for i := range sp.threads {
		sp.threads[i].last = sp.threads[i].last[:0] // rebuilt from the first
	}
	for c, chunk := range sp.entries {
		for i := range chunk {
			e := &chunk[i]
			t := &sp.threads[e.thread]
			if place := e.stack & spoolStackMask; place != spoolRepeat {
				own, shared := sp.stacks.stack(place)
				t.last = rebuild(t.last, own, shared)
				pcs := t.last
				id := s.interns.InternHashed(pcs, e.hash, e.stack&spoolTruncated != 0)
				if e.stack&spoolCFI != 0 {
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
	for i := range sp.threads {
		// Drop the pointers and names; keep the memory of last.
		sp.threads[i] = spoolThread{last: sp.threads[i].last[:0]}
	}
	sp.threads = sp.threads[:0]
	for i := range sp.entries {
		sp.entries[i] = sp.entries[i][:0]
	}
	for i := range sp.times {
		sp.times[i] = sp.times[i][:0]
	}
	// add fills the last chunk: the rest go to the collector.
	clear(sp.entries[1:])
	clear(sp.times[min(1, len(sp.times)):])
	sp.entries, sp.times = sp.entries[:1], sp.times[:min(1, len(sp.times))]
	sp.stacks.reset()
	sp.bytes = 0
}

// rebuild returns the stack of the addresses own followed by the shared
// outer frames of last, the stack before it, in last's memory where it
// fits.
func rebuild(last, own []uint64, shared int) []uint64 {
	shared = min(shared, len(last))
	from, n := len(last)-shared, len(own)+shared
	if n > cap(last) {
		st := make([]uint64, n, 2*n)
		copy(st[len(own):], last[from:])
		copy(st, own)
		return st
	}
	st := last[:n]
	copy(st[len(own):], last[from:from+shared]) // (a move: they may overlap)
	copy(st, own)
	return st
}
