//go:build linux && (amd64 || arm64)

package ptrace

import (
	"cmp"
	"encoding/binary"
	"slices"
	"time"

	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"github.com/macprof/macprof/unwind/cfi"
	"golang.org/x/sys/unix"
)

// The samples of process rings (processrings_linux.go): kept as the kernel
// wrote them while the command runs, then read into a list per thread and
// handed out.

// ringSample is one sample moved out of a process ring.
type ringSample struct {
	time     uint64
	pid, tid uint32
	next     int32  // the thread's next sample in samples, or -1
	off, n   uint32 // its addresses: pcs[off : off+n]
	ver      int32  // the version of its process's images (imageHistory), or -1
	deep     bool   // the kernel's chain had more frames than kept
	// stop is why the walk of its stack copy ended (stack copies only).
	stop unwind.StopReason
}

// sampleList is a thread's samples not yet taken: first and last indexes
// in samples.
type sampleList struct{ first, last int32 }

// keptChunk is the size of the chunks kept records are held in, and
// keptMost how many bytes of records keep holds before they are handed
// out (and interned): half a minute of two busy threads' samples 30 frames
// deep at 999 Hz, a second's parsing. The sampler's spool of the stacks
// handed out (record's spoolBytes) comes on top.
const (
	keptChunk = 1 << 20
	keptMost  = 16 << 20
)

// keptBound bounds the Go heap that process rings' samples take: those
// kept (keptMost, in chunks reused from one keep to the next), as many
// bytes again once parsed for the sampler (reused as well), what the rings
// held when they were parsed (up to bigRingBudget), and the smaller arrays
// of an earlier parse that the collector has not freed yet.
const keptBound = 3 * keptMost

// keptFirst is the first chunk of kept, faulted in before the command runs:
// twelve seconds of two busy threads' samples at 999 Hz.
const keptFirst = 8 << 20

// collect moves every sample of the command's processes in the rings, and
// those keep kept, into samples, replacing those of the last collect (taken
// or not), gives each the version of its process's images at its time,
// notes a new executable mapping of the command (mapped), and frees the
// rings. It allocates nothing once samples, pcs and heads have grown to a
// drain's needs and no process forked, exec'd or mapped code.
func (p *processRings) collect() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.heads)
	clear(p.exits)
	clear(p.lost)
	p.unordered = false
	if p.stack > 0 {
		p.collectStacks()
		p.noteSampled()
		return
	}
	p.reserve()
	for i, chunk := range p.kept {
		for len(chunk) >= 8 {
			n := int(binary.LittleEndian.Uint16(chunk[6:]))
			if n < 8 || n > len(chunk) {
				break
			}
			p.record(chunk[:n])
			chunk = chunk[n:]
		}
		if i > 0 && len(p.spare) < keptMost/keptChunk {
			// Kept for the next keep, so that keeping makes no garbage.
			p.spare = append(p.spare, p.kept[i][:0])
		}
		p.kept[i] = nil
	}
	if len(p.kept) > 0 {
		// The first chunk is kept for reuse, faulted in already.
		p.kept = append(p.kept[:0], p.kept[0][:0])
	}
	p.keptBytes, p.keptRecords = 0, 0
	for _, r := range p.rings {
		r.begin()
		for {
			at, size, _, ok := r.nextRecord()
			if !ok {
				break
			}
			rec := r.slice(at, int(size))
			if rec == nil {
				if size > uint64(len(p.rec)) {
					continue
				}
				rec = p.rec[:size]
				r.readAt(rec, at)
			}
			p.record(rec)
		}
		r.consume()
	}
	p.hist.apply(p.pid, p.vdso)
	p.names.apply()
	for i := range p.samples {
		s := &p.samples[i]
		s.ver = p.hist.at(int(s.pid), s.time)
	}
	p.order()
	p.noteSampled()
}

// noteSampled notes the time of a collect that read a sample. The caller
// holds mu.
func (p *processRings) noteSampled() {
	if len(p.samples) > 0 {
		p.sampledAt.Store(time.Now().UnixNano())
	}
}

// recentlySampled reports whether a collect read a sample within
// busyRingHold before now.
func (p *processRings) recentlySampled(now time.Time) bool {
	at := p.sampledAt.Load()
	return at != 0 && now.UnixNano()-at < int64(busyRingHold)
}

// busyRingHold is how long descendant rings are drained as busy ones after
// their last sample: a command that started a process (make, a test runner)
// mostly starts another soon after, whose first samples would otherwise
// wait a whole fill time.
const busyRingHold = time.Second

// collectStacks reads the rings of stack copies (never kept): first the
// records that change a process's images, then each sample, walked where
// the kernel wrote it with the unwind tables of its process's images at its
// time, its frames appended to pcs. The rings are freed only after both
// passes, which read the same records. It allocates nothing once samples
// and pcs have grown to a collect's needs and no process forked, exec'd or
// mapped code.
func (p *processRings) collectStacks() {
	p.samples, p.pcs = p.samples[:0], p.pcs[:0]
	for i, r := range p.rings {
		r.begin()
		for {
			at, size, typ, ok := r.nextRecord()
			if !ok {
				break
			}
			if typ != unix.PERF_RECORD_SAMPLE {
				if rec := p.read(r, at, size); rec != nil {
					p.record(rec)
				}
			}
		}
		p.ends[i] = r.pos
	}
	p.hist.apply(p.pid, p.vdso)
	p.names.apply()
	for i, r := range p.rings {
		r.begin()
		r.head = min(r.head, p.ends[i])
		for {
			at, size, typ, ok := r.nextRecord()
			if !ok {
				break
			}
			if typ == unix.PERF_RECORD_SAMPLE {
				if rec := p.read(r, at, size); rec != nil {
					p.walkSample(rec)
				}
			}
		}
		r.consume()
	}
	p.order()
}

// read returns the record of size bytes at ring position at: in place, or
// copied into rec where it wraps around the ring's end (nil if larger).
func (p *processRings) read(r *perfRing, at, size uint64) []byte {
	if rec := r.slice(at, int(size)); rec != nil {
		return rec
	}
	if size > uint64(len(p.rec)) {
		return nil
	}
	rec := p.rec[:size]
	r.readAt(rec, at)
	return rec
}

// walkSample appends the sample record rec (TID, TIME, REGS_USER,
// STACK_USER) if it is well formed, has user registers and is not of the
// command's own process in descendant rings: the walk of its stack copy
// with the unwind tables of its process's images at its time (by frame
// records where they are not known), at most maxFrames addresses.
func (p *processRings) walkSample(rec []byte) {
	ps := &p.sample
	if err := parsePerfSample(rec, perfRegCount, p.regBuf[:], ps); err != nil || len(ps.regs) != perfRegCount || len(rec) < 16 {
		return
	}
	pid := binary.LittleEndian.Uint32(rec[8:])
	if p.kidsOnly && int(pid) == p.pid {
		return // sampled by its threads' own rings
	}
	s := ringSample{pid: pid, tid: ps.tid, time: ps.time, next: -1, off: uint32(len(p.pcs))}
	s.ver = p.hist.at(int(pid), s.time)
	regs := perfRegs(ps.regs)
	data := rec[ps.stackOff : ps.stackOff+ps.stackLen]
	st := unwind.Stack{Base: regs.SP, Data: data, Lo: regs.SP, Hi: regs.SP + uint64(len(data))}
	var res *cfi.Resolver
	if s.ver >= 0 && !p.fpOnly {
		_, res = p.hist.images(s.ver)
	}
	room := max(p.maxFrames, 1)
	if cap(p.pcs)-len(p.pcs) < room {
		p.pcs = slices.Grow(p.pcs, max(room, cap(p.pcs)))
	}
	l := len(p.pcs)
	dst := p.pcs[l : l : l+room]
	var out []uint64
	var w unwind.Result
	if res == nil {
		out, w = p.walker.Walk(regs, &st, dst)
	} else {
		out, w = p.walker.WalkCFI(regs, &st, res, dst)
	}
	p.pcs = p.pcs[:l+copy(p.pcs[l:l+room], out)]
	s.n, s.stop = uint32(len(p.pcs)-l), w.Stop
	p.link(s)
}

// link appends s to samples and to its thread's list, and notes in
// unordered a sample older than its thread's last. A sample the kernel
// wrote no ids in (-1: its task was being released; 0: of another PID
// namespace) is left out, rather than shown as a thread that never was.
func (p *processRings) link(s ringSample) {
	if s.tid == 0 || s.tid == ^uint32(0) || s.pid == 0 || s.pid == ^uint32(0) {
		return
	}
	i := int32(len(p.samples))
	p.samples = append(p.samples, s)
	p.linkAt(i)
}

// linkAt appends samples[i] to its thread's list.
func (p *processRings) linkAt(i int32) {
	s := &p.samples[i]
	if l, ok := p.heads[s.tid]; ok {
		p.unordered = p.unordered || s.time < p.samples[l.last].time
		p.samples[l.last].next = i
		p.heads[s.tid] = sampleList{first: l.first, last: i}
	} else if len(p.heads) < maxDeparted {
		p.heads[s.tid] = sampleList{first: i, last: i}
	}
}

// order makes each thread's list oldest first where a thread's samples
// came from several CPUs' rings out of order (it moved between CPUs): a
// stable sort of samples by time (which allocates nothing), then the lists
// built again.
func (p *processRings) order() {
	if !p.unordered {
		return
	}
	p.unordered = false
	slices.SortStableFunc(p.samples, func(a, b ringSample) int { return cmp.Compare(a.time, b.time) })
	clear(p.heads)
	for i := range p.samples {
		p.samples[i].next = -1
		p.linkAt(int32(i))
	}
}

// reserve empties samples and pcs, with room for every record kept and
// in the rings (a record holds 8 bytes for each of its addresses, and a
// sample record at least 48 bytes in all), allocated once at the size
// needed rather than grown by appends, which would leave the collector
// copies of up to as much again.
func (p *processRings) reserve() {
	need, records := p.keptBytes, p.keptRecords
	for _, r := range p.rings {
		r.begin()
		need += int(r.head - r.pos)
		records += int(r.head-r.pos) / processRecordMin
	}
	if cap(p.pcs) < need/8 {
		p.pcs = nil
		p.pcs = make([]uint64, 0, need/8)
	}
	if cap(p.samples) < records {
		p.samples = nil
		p.samples = make([]ringSample, 0, records)
	}
	p.samples, p.pcs = p.samples[:0], p.pcs[:0]
}

// record reads one record: a sample, or an event that changes a process's
// images.
func (p *processRings) record(rec []byte) {
	if len(rec) < 16 {
		return
	}
	switch binary.LittleEndian.Uint32(rec) {
	case unix.PERF_RECORD_SAMPLE:
		p.add(rec)
	case unix.PERF_RECORD_MMAP2:
		if int(binary.LittleEndian.Uint32(rec[8:])) == p.pid {
			p.mapped.Store(true)
		}
		p.hist.note(rec)
	case unix.PERF_RECORD_FORK, unix.PERF_RECORD_COMM:
		p.hist.note(rec)
		p.names.note(rec)
	case unix.PERF_RECORD_EXIT:
		p.names.note(rec)
	case unix.PERF_RECORD_READ:
		p.exited(rec)
	case unix.PERF_RECORD_LOST:
		p.lostRecord(rec)
	}
}

// lostRecord adds the count of a PERF_RECORD_LOST (the event's id, how many
// samples were dropped, then the sample_id: pid, tid) to the thread in
// whose context the kernel wrote it: on a CPU's ring, mostly the thread
// whose samples filled it, which runs on as it gets room again (the kernel
// names no thread of the samples it dropped). Each count is bounded as
// perfRing's is.
func (p *processRings) lostRecord(rec []byte) {
	le := binary.LittleEndian
	if len(rec) < perfLostRecordLen+8 {
		return
	}
	n := min(le.Uint64(rec[16:]), maxLostPerRecord)
	pid, tid := le.Uint32(rec[24:]), le.Uint32(rec[28:])
	if p.lost == nil {
		p.lost = make(map[uint32]threadLost)
	}
	l, ok := p.lost[tid]
	if !ok && len(p.lost) >= maxDeparted {
		return
	}
	l.pid, l.n = pid, min(l.n+n, maxLostPerRecord)
	p.lost[tid] = l
}

// threadLost is the process of a thread and the samples the kernel dropped
// in its context.
type threadLost struct {
	pid uint32
	n   uint64
}

// exited adds the count of a read record (pid, tid, the value of a
// read_format 0, then the sample_id), written as a descendant's thread
// exits, one per CPU's event, to the thread's CPU time in exits, and
// counts the events that ran it.
func (p *processRings) exited(rec []byte) {
	le := binary.LittleEndian
	if p.exits == nil || len(rec) < 24 {
		return
	}
	pid, tid := le.Uint32(rec[8:]), le.Uint32(rec[12:])
	if int(pid) == p.pid {
		return
	}
	e, ok := p.exits[tid]
	if !ok && len(p.exits) >= maxDeparted {
		return
	}
	ns := le.Uint64(rec[16:])
	e.pid, e.ns = pid, e.ns+ns
	if ns > 0 {
		e.events++
	}
	p.exits[tid] = e
}

// threadExit is the process and CPU time (ns) of a descendant's thread
// that exited, and how many of its events (one per CPU) counted any.
type threadExit struct {
	pid    uint32
	ns     uint64
	events int
}

// keep copies what the rings hold into kept, as the kernel wrote it (collect
// reads it later), notes executable mappings of the process, frees the
// rings, and reports whether kept holds less than keptMost.
func (p *processRings) keep() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rings {
		r.begin()
		from := r.pos
		for {
			at, size, typ, ok := r.nextRecord()
			if !ok {
				break
			}
			if typ == unix.PERF_RECORD_SAMPLE {
				p.keptRecords++
			}
			if typ == unix.PERF_RECORD_MMAP2 && size >= 16 {
				var head [16]byte
				r.readAt(head[:], at)
				if int(binary.LittleEndian.Uint32(head[8:])) == p.pid {
					p.mapped.Store(true)
				}
			}
		}
		// Whole records only: nextRecord stops short of a torn one.
		if n := int(r.pos - from); n > 0 {
			p.keepBytes(r, from, n)
		}
		r.consume()
	}
	return p.keptBytes < keptMost
}

// keepBytes appends the n bytes of r at position at to kept, in a chunk of
// their own if the last has no room for them.
func (p *processRings) keepBytes(r *perfRing, at uint64, n int) {
	if k := len(p.kept); k == 0 || len(p.kept[k-1])+n > cap(p.kept[k-1]) {
		if s := len(p.spare); s > 0 && cap(p.spare[s-1]) >= n {
			p.kept = append(p.kept, p.spare[s-1])
			p.spare[s-1] = nil
			p.spare = p.spare[:s-1]
		} else {
			p.kept = append(p.kept, make([]byte, 0, max(keptChunk, n)))
		}
	}
	last := &p.kept[len(p.kept)-1]
	m := len(*last)
	*last = (*last)[:m+n]
	r.readAt((*last)[m:], at)
	p.keptBytes += n
}

// add appends the sample record rec (TID, TIME, CALLCHAIN) if it is well
// formed and not of the command's own process in descendant rings: its
// user addresses, at most maxFrames.
func (p *processRings) add(rec []byte) {
	le := binary.LittleEndian
	if len(rec) < processRecordMin || len(rec) > len(p.rec) {
		return
	}
	n := le.Uint64(rec[24:])
	if n > uint64(len(rec)-processRecordMin)/8 {
		return
	}
	s := ringSample{pid: le.Uint32(rec[8:]), tid: le.Uint32(rec[12:]), time: le.Uint64(rec[16:]), next: -1, off: uint32(len(p.pcs)), ver: -1}
	if p.kidsOnly && int(s.pid) == p.pid {
		return // sampled by its threads' own rings
	}
	users := 0
	for i := 0; i < int(n); i++ {
		v := le.Uint64(rec[processRecordMin+8*i:])
		if v >= perfContextMax {
			continue // a context marker
		}
		users++
		if users <= p.maxFrames {
			p.pcs = append(p.pcs, v)
		}
	}
	s.n = uint32(len(p.pcs)) - s.off
	s.deep = users > int(s.n) || users >= perfMaxStack()
	p.link(s)
}

// mappedSince reports whether the process mapped executable code since the
// last call.
func (p *processRings) mappedSince() bool { return p.mapped.Swap(false) }

// threadsWithSamples appends to dst each thread with samples not yet taken,
// once, with how many, its process and its name (threadNames), and each
// descendant's thread the last collect found exited (with the CPU time it
// used), once.
func (p *processRings) threadsWithSamples(dst []threadSamples) []threadSamples {
	p.mu.Lock()
	defer p.mu.Unlock()
	dst = dst[:0]
	for tid, l := range p.heads {
		n := 0
		for i := l.first; i >= 0; i = p.samples[i].next {
			n++
		}
		e, ended := p.exits[tid]
		dst = append(dst, threadSamples{tid: int(tid), pid: int(p.samples[l.first].pid), n: n, lost: int(p.lost[tid].n), exitCPU: time.Duration(e.ns), exitEvents: e.events, exited: ended, name: p.names.of(tid)})
	}
	for tid, e := range p.exits {
		if _, ok := p.heads[tid]; !ok {
			dst = append(dst, threadSamples{tid: int(tid), pid: int(e.pid), lost: int(p.lost[tid].n), exitCPU: time.Duration(e.ns), exitEvents: e.events, exited: true, name: p.names.of(tid)})
		}
	}
	for tid, l := range p.lost {
		if _, ok := p.heads[tid]; ok {
			continue
		}
		if _, ok := p.exits[tid]; ok {
			continue
		}
		dst = append(dst, threadSamples{tid: int(tid), pid: int(l.pid), lost: int(l.n), name: p.names.of(tid)})
	}
	return dst
}

// threadSamples is a thread, its process and how many samples of it were
// collected, and lost (the kernel dropped them: lostRecord); exitCPU, for
// a descendant's thread found exited, the CPU time it used (0: not known)
// by the counts of exitEvents events; name, its name by the rings'
// records ("": not known).
type threadSamples struct {
	tid, pid, n int
	lost        int
	exitCPU     time.Duration
	exitEvents  int
	exited      bool // the kernel reported its exit
	name        string
}

// take puts into caps tid's samples not yet taken, oldest first, and
// returns how many: each one's addresses (up to the capacity of its PCs)
// in PCs, Walk.Stop StopMaxFrames where the chain was cut, else
// StopEnd, and its process and the images it had then (PID, Images,
// Executable); res[i] is the resolver of caps[i]'s images' unwind tables
// (nil where they are not known).
func (p *processRings) take(tid int, caps []*target.Capture) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.heads[uint32(tid)]
	if !ok {
		return 0
	}
	if len(p.takenRes) < len(caps) {
		p.takenRes = make([]*cfi.Resolver, len(caps))
	}
	i, n := l.first, 0
	for ; n < len(caps) && i >= 0; i = p.samples[i].next {
		s := &p.samples[i]
		c := caps[n]
		pcs := p.pcs[s.off : s.off+s.n]
		c.PCs = append(c.PCs[:0], pcs[:min(len(pcs), cap(c.PCs))]...)
		c.Walk = unwind.Result{Stop: unwind.StopEnd}
		if p.stack > 0 {
			c.Walk.Stop = s.stop
		}
		if s.deep || len(c.PCs) < len(pcs) {
			c.Walk.Stop = unwind.StopMaxFrames
		}
		c.PID, c.Images, c.Executable = int(s.pid), nil, ""
		c.Time = p.clock.at(s.time)
		c.ThreadName = p.names.at(s.tid, s.time)
		p.takenRes[n] = nil
		if s.ver >= 0 {
			c.Images, p.takenRes[n] = p.hist.images(s.ver)
			c.Executable = p.hist.versions[s.ver].exe
		}
		n++
	}
	if i < 0 {
		delete(p.heads, uint32(tid))
	} else {
		p.heads[uint32(tid)] = sampleList{first: i, last: l.last}
	}
	return n
}

// drainProcess puts into caps the samples of thread tid from p's last
// collect not drained yet, and returns how many. A callchain the unwind
// tables find a frame without a frame record in is cut there (marked
// truncated), as fillFromChain does, the tables of its objects built first
// if need be; chains the tables vouch for whole are
// remembered (exact), as most samples repeat a stack. The caller holds
// hotMu.
func (t *Target) drainProcess(p *processRings, tid int, caps []*target.Capture) int {
	k := t.kernel
	n := p.take(tid, caps)
	for i, c := range caps[:n] {
		c.Thread, c.Regs, c.Stopped, c.Err = target.ThreadID(tid), unwind.Regs{}, 0, nil
		c.Stack, c.StackBase = c.Stack[:0], 0
		c.Walk.Hash = unwind.HashPCs(c.PCs)
		// Checked against the tables of the images its process had when
		// it was taken.
		r := p.takenRes[i]
		if !t.plan().tables || p.stack > 0 {
			r = nil // (stack copies were walked with the tables)
		}
		if r == nil || len(c.PCs) == 0 || k.exact.has(c.Walk.Hash, c.PCs, r) {
			continue
		}
		// Lookups wait for a table's build (the first of each object,
		// once): nothing is held stopped, and a chain checked before
		// its objects' tables are built passes as whole, however it
		// was cut (a child's first samples in code without frame
		// records, as glibc's qsort under a static Go command).
		check := unwind.CheckChain(c.PCs, r)
		switch {
		case check.Exact(len(c.PCs)):
			k.exact.add(c.Walk.Hash, c.PCs, r)
		case check.Trusted < len(c.PCs) || !check.Whole:
			c.PCs, c.Walk.Stop = c.PCs[:check.Trusted], unwind.StopNoFrameRecord
			c.Walk.Hash = unwind.HashPCs(c.PCs)
		}
	}
	return n
}

// exactChains remembers callchains the unwind tables found exact, by hash,
// leaf, length and the tables (one program's chain proves nothing of
// another's at the same addresses), in a table of fixed size (a newer
// chain takes an older one's slot): a chain found there needs no check.
type exactChains [4096]exactChain

type exactChain struct {
	hash, leaf uint64
	n          int
	res        *cfi.Resolver
}

func (e *exactChains) slot(hash uint64) int { return int(hash % uint64(len(e))) }

func (e *exactChains) has(hash uint64, pcs []uint64, res *cfi.Resolver) bool {
	s := &e[e.slot(hash)]
	return s.hash == hash && s.n == len(pcs) && s.leaf == pcs[0] && s.res == res
}

func (e *exactChains) add(hash uint64, pcs []uint64, res *cfi.Resolver) {
	e[e.slot(hash)] = exactChain{hash, pcs[0], len(pcs), res}
}
