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
// (bench/cbusy at 999 Hz: about half a node a sample, where copying each
// sample's callers took 83 bytes). What the spool
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

// The chunk sizes: 64 Ki entries (1.5 MiB), 32 Ki nodes (128 KiB).
const (
	spoolEntryChunk = 1 << 16
	spoolNodeShift  = 15
	spoolNodeChunk  = 1 << spoolNodeShift
)

// spoolTree holds the spool's stacks as a tree: node i (from 1; 0 is the
// root, the empty stack) is an address called from a parent node, kept in
// an open-addressed table of slots. A node's slot comes from a hash of its
// whole stack, chained frame by frame from the outermost caller (keyed by
// seed, as stack addresses come from the target), not from its parent's
// number: the slots of a stack's frames are known before any is read, and
// are loaded at once, where probes that each waited for the last would
// wait for a cache line a frame (the table is out of the caches when a
// drain comes, the rings' records having passed through them). A slot
// holds the node's address, parent and number: a probe loads one line.
type spoolTree struct {
	table []spoolSlot // a power of two, at most half full
	at    [][]uint32  // chunks of spoolNodeChunk: each node's slot
	n     uint32      // nodes issued, the root included
	seed  uint64
	gen   uint64 // counts the resets: a spoolPath of another gen is stale
	// touched keeps the sum of node's early loads.
	touched uint32
}

// spoolSlot is a node of a spoolTree in its table: node 0 for none.
type spoolSlot struct {
	pc     uint64
	parent uint32
	node   uint32
}

// spoolPath is the last stack a thread spooled, outermost frame first, with
// its nodes and their stacks' hashes: a thread's next stack mostly shares
// its outer frames, which node finds here by comparing addresses rather
// than in the table (a busy loop's samples differ in their last frames).
type spoolPath struct {
	pcs    []uint64
	nodes  []uint32
	hashes []uint64
	gen    uint64 // the tree's gen when they were found
}

// spoolNodeBytes is what a node costs the spool: two slots of the table
// and the index of its own.
const spoolNodeBytes = 2*16 + 4

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
		if t.table == nil {
			t.table = make([]spoolSlot, 4096)
		}
	}
	same, h := 0, t.seed
	if path.gen == t.gen {
		for same < len(path.pcs) && same < len(pcs) && path.pcs[same] == pcs[len(pcs)-1-same] {
			same++
		}
		if same > 0 {
			node, h = path.nodes[same-1], path.hashes[same-1]
		}
	}
	path.pcs, path.nodes, path.hashes, path.gen = path.pcs[:same], path.nodes[:same], path.hashes[:same], t.gen
	// Load the slots of the frames past the path's, none waiting for
	// another (the sum keeps the loads).
	mask := uint64(len(t.table) - 1)
	var touched uint32
	for i, x := len(pcs)-1-same, h; i >= 0; i-- {
		x = spoolHash(x, pcs[i])
		touched += t.table[x&mask].node
	}
	t.touched = touched
	for i := len(pcs) - 1 - same; i >= 0; i-- {
		pc := pcs[i]
		h = spoolHash(h, pc)
		for slot := h & mask; ; slot = (slot + 1) & mask {
			e := &t.table[slot]
			if e.node == 0 {
				break
			}
			if e.pc == pc && e.parent == node {
				node = e.node
				goto next
			}
		}
		if t.n >= spoolMaxNodes {
			return 0, added, false
		}
		node = t.add(node, pc, h)
		mask = uint64(len(t.table) - 1)
		added++
	next:
		path.pcs, path.nodes, path.hashes = append(path.pcs, pc), append(path.nodes, node), append(path.hashes, h)
	}
	return node, added, true
}

// spoolHash is the hash of a stack from that of its callers, h, and its
// innermost address; the seed is the empty stack's.
func spoolHash(h, pc uint64) uint64 {
	hi, lo := bits.Mul64(h^pc, 0x9e3779b97f4a7c15)
	return hi ^ lo
}

// add issues the node of pc under parent, whose stack's hash is h,
// growing the table to stay at most half full.
func (t *spoolTree) add(parent uint32, pc, h uint64) uint32 {
	c := t.n
	if k := int(c >> spoolNodeShift); k == len(t.at) {
		t.at = append(t.at, make([]uint32, spoolNodeChunk))
	}
	t.n++
	if 2*int(t.n) > len(t.table) {
		t.grow()
	}
	t.insert(spoolSlot{pc: pc, parent: parent, node: c}, h)
	return c
}

// insert puts e, whose stack's hash is h, in the table and notes its slot.
func (t *spoolTree) insert(e spoolSlot, h uint64) {
	mask := uint64(len(t.table) - 1)
	slot := h & mask
	for t.table[slot].node != 0 {
		slot = (slot + 1) & mask
	}
	t.table[slot] = e
	t.at[e.node>>spoolNodeShift][e.node&(spoolNodeChunk-1)] = uint32(slot)
}

// grow doubles the table and puts every node in it, its stack's hash
// found again from its parent's (nodes are issued after their parents).
func (t *spoolTree) grow() {
	old := t.table
	t.table = make([]spoolSlot, 2*len(old))
	hashes := make([]uint64, t.n-1)
	for c := uint32(1); c < t.n-1; c++ {
		e := old[t.at[c>>spoolNodeShift][c&(spoolNodeChunk-1)]]
		h := t.seed
		if e.parent != 0 {
			h = hashes[e.parent]
		}
		h = spoolHash(h, e.pc)
		hashes[c] = h
		t.insert(e, h)
	}
}

// appendStack appends the stack that ends at node c, first address first.
func (t *spoolTree) appendStack(dst []uint64, c uint32) []uint64 {
	for c != 0 {
		e := &t.table[t.at[c>>spoolNodeShift][c&(spoolNodeChunk-1)]]
		dst = append(dst, e.pc)
		c = e.parent
	}
	return dst
}

// reset forgets every node, keeping the first chunk and the table.
func (t *spoolTree) reset() {
	clear(t.table)
	t.n = 0
	t.gen++
	t.at = t.at[:min(1, len(t.at))]
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
