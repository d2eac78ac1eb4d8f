package sampler

import (
	"math"
	"math/bits"
	"math/rand/v2"
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
// not scan them. A flush keeps the first chunk of each for the next
// samples. Stacks are nodes of a tree from the outermost caller in
// (spoolTree), and an entry holds its stack's node: a sample adds only the
// frames no stack spooled since the last flush had under the same callers
// (bench/cbusy at 999 Hz: 35 bytes a sample, 83 when each sample's chain
// of callers was copied unless a recent one was the same). What the spool
// grows by is page faults, each dearer than the lookups that spare it:
// 10-40 us a page in the virtual machines measured.
type spool struct {
	limit, bytes int
	entries      [][]spooled // chunks of spoolEntryChunk, all full but the last
	times        [][]int64   // with timed, the entries' times, chunk by chunk
	threads      []spoolThread
	timed        bool // a timeline is kept: entries have times
	tree         spoolTree
	// stack is where a flush puts a stack back together.
	stack []uint64
}

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
// stack that ends at tree node stack&spoolNodeMask (0: no frame), or, with
// that spoolRepeat, on the last stack spooled or counted for the thread
// before it; spoolTruncated and spoolCFI mark the walk's stack as
// truncated and walked with tables.
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
	spoolNodeMask  = spoolCFI - 1
	spoolRepeat    = spoolNodeMask // a node the tree never issues
)

// The chunk sizes: 64 Ki entries (1.5 MiB), 32 Ki nodes (384 KiB).
const (
	spoolEntryChunk = 1 << 16
	spoolNodeShift  = 15
	spoolNodeChunk  = 1 << spoolNodeShift
)

// spoolTree holds the spool's stacks as a tree: node i (from 1; 0 is the
// root, the empty stack) is the address pc[i] called from node parent[i],
// found by (parent, pc) in an open-addressed table of node numbers. Its
// hash is keyed (seed), as stack addresses come from the target.
type spoolTree struct {
	pc     [][]uint64 // chunks of spoolNodeChunk: the nodes' addresses
	parent [][]uint32 // and their callers' nodes
	n      uint32     // nodes issued, the root included
	table  []uint32   // node numbers, 0 for none; a power of two, at most half full
	seed   uint64
	gen    uint64 // counts the resets: a spoolPath of another gen is stale
}

// spoolPath is the last stack a thread spooled, outermost frame first, with
// its nodes: a thread's next stack mostly shares its outer frames, which
// node finds here by comparing addresses rather than by a probe of the
// table each (a busy loop's samples differ in their last frame or two).
type spoolPath struct {
	pcs   []uint64
	nodes []uint32
	gen   uint64 // the tree's gen when they were found
}

// spoolNodeBytes is what a node costs the spool: its address, its parent
// and two slots of the table.
const spoolNodeBytes = 8 + 4 + 2*4

// spoolMaxNodes bounds a tree's nodes below spoolRepeat.
const spoolMaxNodes = spoolRepeat - 1

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

// node returns the tree's node of the stack pcs (first address first),
// adding the nodes it lacks, and how many it added; ok is false when the
// tree holds spoolMaxNodes. The outer frames it shares with path (the
// thread's last stack) are taken from there, and path becomes pcs.
func (t *spoolTree) node(pcs []uint64, path *spoolPath) (node uint32, added int, ok bool) {
	if t.n == 0 {
		t.n = 1 // the root
		if t.seed == 0 {
			t.seed = rand.Uint64() | 1
		}
	}
	same := 0
	if path.gen == t.gen {
		for same < len(path.pcs) && same < len(pcs) && path.pcs[same] == pcs[len(pcs)-1-same] {
			same++
		}
		if same > 0 {
			node = path.nodes[same-1]
		}
	}
	path.pcs, path.nodes, path.gen = path.pcs[:same], path.nodes[:same], t.gen
	for i := len(pcs) - 1 - same; i >= 0; i-- {
		pc := pcs[i]
		mask := uint64(len(t.table) - 1)
		slot := t.slot(node, pc) & mask
		for len(t.table) > 0 {
			c := t.table[slot]
			if c == 0 {
				break
			}
			if t.pc[c>>spoolNodeShift][c&(spoolNodeChunk-1)] == pc && t.parent[c>>spoolNodeShift][c&(spoolNodeChunk-1)] == node {
				node = c
				goto next
			}
			slot = (slot + 1) & mask
		}
		if t.n >= spoolMaxNodes {
			return 0, added, false
		}
		node = t.add(node, pc)
		added++
	next:
		path.pcs, path.nodes = append(path.pcs, pc), append(path.nodes, node)
	}
	return node, added, true
}

// slot hashes a node's parent and address into the table.
func (t *spoolTree) slot(parent uint32, pc uint64) uint64 {
	hi, lo := bits.Mul64(pc^t.seed, uint64(parent)^0x9e3779b97f4a7c15)
	return hi ^ lo
}

// add issues the node of pc under parent, growing the table to stay at
// most half full.
func (t *spoolTree) add(parent uint32, pc uint64) uint32 {
	c := t.n
	if k := int(c >> spoolNodeShift); k == len(t.pc) {
		t.pc = append(t.pc, make([]uint64, spoolNodeChunk))
		t.parent = append(t.parent, make([]uint32, spoolNodeChunk))
	}
	t.pc[c>>spoolNodeShift][c&(spoolNodeChunk-1)] = pc
	t.parent[c>>spoolNodeShift][c&(spoolNodeChunk-1)] = parent
	t.n++
	if 2*int(t.n) > len(t.table) {
		t.grow()
	} else {
		t.insert(c)
	}
	return c
}

// insert puts node c in the table.
func (t *spoolTree) insert(c uint32) {
	mask := uint64(len(t.table) - 1)
	slot := t.slot(t.parent[c>>spoolNodeShift][c&(spoolNodeChunk-1)], t.pc[c>>spoolNodeShift][c&(spoolNodeChunk-1)]) & mask
	for t.table[slot] != 0 {
		slot = (slot + 1) & mask
	}
	t.table[slot] = c
}

// grow doubles the table (4096 slots at first) and puts every node in it.
func (t *spoolTree) grow() {
	t.table = make([]uint32, max(4096, 2*len(t.table)))
	for c := uint32(1); c < t.n; c++ {
		t.insert(c)
	}
}

// appendStack appends the stack that ends at node c, first address first.
func (t *spoolTree) appendStack(dst []uint64, c uint32) []uint64 {
	for c != 0 {
		dst = append(dst, t.pc[c>>spoolNodeShift][c&(spoolNodeChunk-1)])
		c = t.parent[c>>spoolNodeShift][c&(spoolNodeChunk-1)]
	}
	return dst
}

// reset forgets every node, keeping the first chunk and the table.
func (t *spoolTree) reset() {
	clear(t.table)
	t.n = 0
	t.gen++
	clear(t.pc[1:]) // to the collector
	clear(t.parent[1:])
	t.pc, t.parent = t.pc[:min(1, len(t.pc))], t.parent[:min(1, len(t.parent))]
}

// spoolStack keeps n samples of a thread on the stack pcs, to be interned
// at the next flush, and makes it the thread's last stack.
func (s *Sampler) spoolStack(pid int, tid target.ThreadID, th *threadState, pcs []uint64, hash uint64, truncated, cfi bool, n, at int64) {
	sp := s.spool
	node, added, ok := sp.tree.node(pcs, &th.spoolPath)
	if !ok {
		s.flushSpool()
		node, added, _ = sp.tree.node(pcs, &th.spoolPath)
	}
	sp.bytes += added * spoolNodeBytes
	e := spooled{hash: hash, n: n, thread: sp.thread(pid, tid, th), stack: node}
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
	for c, chunk := range sp.entries {
		for i := range chunk {
			e := &chunk[i]
			t := &sp.threads[e.thread]
			if node := e.stack & spoolNodeMask; node != spoolRepeat {
				pcs := sp.tree.appendStack(sp.stack[:0], node)
				sp.stack = pcs
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
	clear(sp.threads) // drop the pointers and names
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
	sp.tree.reset()
	sp.bytes = 0
}
