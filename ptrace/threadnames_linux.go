//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// threadNames names the threads process rings sample from the kernel's
// records, as perf report does: a thread starts with the name of the
// thread that created it (a fork record, of a thread or a process) and
// takes a new one when it execs or renames itself (a comm record:
// prctl(PR_SET_NAME), pthread_setname_np). The records are all that is
// left of the name of a thread that ended before /proc could be read. A
// thread's exit record has its name forgotten one apply later, once the
// listing that follows the collect took it.
type threadNames struct {
	events []nameEvent       // read since the last apply
	cur    map[uint32]string // each thread's name as of the last apply
	exited []nameEvent       // threads that exited by the last apply, with their names
	// changes are the names the last apply's records changed, by thread
	// then time, so that each sample is named as its thread was when it
	// was taken (at).
	changes []nameChange
}

// nameChange is thread tid's name going from old to name at time.
type nameChange struct {
	time      uint64
	tid       uint32
	old, name string
}

// nameEvent is a comm record (name set), a fork record (ptid the creating
// thread) or an exit record (neither), with its time.
type nameEvent struct {
	time      uint64
	tid, ptid uint32
	name      string
}

// maxNameEvents bounds the records one collect keeps, and maxNamed the
// threads threadNames holds a name for (a thread created when as many are
// named has none from the records): every thread one collect's records
// create, more than the threads whose samples it lists (maxDeparted).
const (
	maxNameEvents = 1 << 16
	maxNamed      = maxNameEvents
)

// seed names thread tid, read before the thread ran (its exec's comm
// record was written before the rings were opened).
func (n *threadNames) seed(tid int, name string) {
	if name == "" {
		return
	}
	if n.cur == nil {
		n.cur = make(map[uint32]string)
	}
	n.cur[uint32(tid)] = name
}

// note keeps rec if it is a comm record (pid, tid, the name padded with
// NULs, then a 16-byte sample_id whose last 8 bytes are its time) or a fork
// or exit record (pid, ppid, tid, ptid, time, sample_id). It allocates only the
// name of a comm record, which a thread writes when it execs or renames
// itself, not per sample.
func (n *threadNames) note(rec []byte) {
	le := binary.LittleEndian
	if len(rec) < 8+8+16 || len(n.events) >= maxNameEvents {
		return
	}
	switch le.Uint32(rec) {
	case unix.PERF_RECORD_COMM:
		tid, name := commRecord(rec[:len(rec)-16])
		if len(name) == 0 || len(name) > 64 {
			return
		}
		n.events = append(n.events, nameEvent{time: le.Uint64(rec[len(rec)-8:]), tid: tid, name: string(name)})
	case unix.PERF_RECORD_FORK, unix.PERF_RECORD_EXIT:
		if len(rec) < 32 {
			return
		}
		e := nameEvent{time: le.Uint64(rec[24:]), tid: le.Uint32(rec[16:])}
		if le.Uint32(rec) == unix.PERF_RECORD_FORK {
			e.ptid = le.Uint32(rec[20:])
		}
		n.events = append(n.events, e)
	}
}

// apply forgets the threads that exited by the last call (unless their id
// was taken since by a thread of another name), then plays the records
// noted since in time order (each CPU's ring is in order, not the rings
// together): a fork gives the new thread its creator's name (or none, if
// that is not known: a reused id loses the name of the thread that had
// it), a comm record its own, an exit is noted.
func (n *threadNames) apply() {
	for _, e := range n.exited {
		if n.cur[e.tid] == e.name {
			delete(n.cur, e.tid)
		}
	}
	clear(n.exited)
	n.exited = n.exited[:0]
	clear(n.changes)
	n.changes = n.changes[:0]
	if len(n.events) == 0 {
		return
	}
	slices.SortStableFunc(n.events, func(a, b nameEvent) int { return cmp.Compare(a.time, b.time) })
	if n.cur == nil {
		n.cur = make(map[uint32]string)
	}
	for i := range n.events {
		e := &n.events[i]
		name := e.name
		switch {
		case e.ptid != 0:
			name = n.cur[e.ptid]
		case name == "":
			if had, ok := n.cur[e.tid]; ok {
				n.exited = append(n.exited, nameEvent{tid: e.tid, name: had})
			}
			continue
		}
		old, had := n.cur[e.tid]
		if name == "" {
			delete(n.cur, e.tid)
		} else if had || len(n.cur) < maxNamed {
			n.cur[e.tid] = name
		}
		if name != old {
			n.changes = append(n.changes, nameChange{time: e.time, tid: e.tid, old: old, name: n.cur[e.tid]})
		}
		e.name = ""
	}
	n.events = n.events[:0]
	slices.SortStableFunc(n.changes, func(a, b nameChange) int { return cmp.Compare(a.tid, b.tid) })
}

// at returns thread tid's name at time t by the last apply's records, or ""
// if they did not change it (its name is then of).
func (n *threadNames) at(tid uint32, t uint64) string {
	i, found := slices.BinarySearchFunc(n.changes, tid, func(c nameChange, tid uint32) int { return cmp.Compare(c.tid, tid) })
	if !found {
		return ""
	}
	end, _ := slices.BinarySearchFunc(n.changes[i:], tid+1, func(c nameChange, tid uint32) int { return cmp.Compare(c.tid, tid) })
	cs := n.changes[i : i+end]
	j, _ := slices.BinarySearchFunc(cs, t+1, func(c nameChange, t uint64) int { return cmp.Compare(c.time, t) })
	if j < len(cs) {
		return cs[j].old // the first change after t
	}
	return cs[len(cs)-1].name
}

// of returns thread tid's name, or "" if the records did not tell it.
func (n *threadNames) of(tid uint32) string { return n.cur[tid] }

// nameSampled names th, a thread known from process rings' samples: named,
// the rings' name for it, else (tried once) what /proc says while it still
// runs; a thread that ended unnamed keeps none and is shown by its id. The
// caller holds stateMu.
func (t *Target) nameSampled(th *thread, named string) {
	switch {
	case named != "":
		th.name = named
	case th.name == "" && th.nameAt.IsZero():
		pid := th.proc
		if pid == 0 {
			pid = t.pid
		}
		th.name, th.nameAt = readComm(pid, th.tid), time.Now()
	}
}

// nameWatch decides when Info reads a thread's name from /proc again. A
// name is read when the thread is first seen; then once its ring opens (a
// thread that names itself at its start, between its listing and its first
// capture, wrote that comm record to no ring); then after a comm record (a
// thread of the process renamed itself or another, or it exec'd) was read
// from any of its rings; and else 1 s after the first read, then after
// twice as long each time, up to nameRecheck: a thread that names itself
// just after it was listed has its name within a second, as when every
// thread's comm file was read every second, which cost a tenth of the
// agent's steady CPU while threads are named once, at their start. The
// caller holds stateMu.
type nameWatch struct {
	// gen counts the listings that found comm records in a ring;
	// each thread's nameGen is gen as of its last read.
	gen uint64
	// every is the longest a name goes unread (0: nameRecheck;
	// tests shorten it).
	every time.Duration
	// reads counts the comm files read (for tests).
	reads int
}

// nameRecheck bounds how long a thread renamed without a record in a ring
// (by another thread that has none, as a comm record goes only to the
// renaming thread's events) keeps its old name: within a window.
// nameFirstRecheck is the wait after a thread's first read.
const (
	nameRecheck      = 10 * time.Second
	nameFirstRecheck = time.Second
)

// noteComms notes a comm record read from r since the last call.
func (w *nameWatch) noteComms(r *perfRing) {
	if r != nil && r.comms.Swap(0) != 0 {
		w.gen++
	}
}

// due reports whether th's name is to be read now.
func (w *nameWatch) due(th *thread, now time.Time) bool {
	if r := th.kernel.ring; r != nil && !r.named.Load() {
		return true
	}
	return w.scheduled(th, now)
}

// scheduled reports whether th's name is due by the schedule: first sight,
// a comm record, or the wait since the last read.
func (w *nameWatch) scheduled(th *thread, now time.Time) bool {
	return th.nameAt.IsZero() || th.nameGen != w.gen || now.Sub(th.nameAt) >= min(th.nameWait, w.longest())
}

// read notes that th's name was read at now. A name its ring has not
// seen is its ring's once drained to its end (a rename by another thread
// writes its comm record to that thread's ring, not this one's; one of its
// own, read before the drain, would be among the records drained). A read
// for a ring just opened leaves the schedule as it was.
func (w *nameWatch) read(th *thread, now time.Time) {
	if r := th.kernel.ring; r != nil {
		if th.name != "" && th.name != r.name {
			r.procName = th.name
		}
		if !r.named.Swap(true) && !w.scheduled(th, now) {
			return
		}
	}
	th.nameAt, th.nameGen = now, w.gen
	th.nameWait = min(max(2*th.nameWait, nameFirstRecheck), w.longest())
}

// longest returns the longest a name goes unread.
func (w *nameWatch) longest() time.Duration {
	if w.every > 0 {
		return w.every
	}
	return nameRecheck
}

// nameRing names the samples of r, the ring just opened for th, from /proc:
// a rename from now on writes a comm record to it (noteComm).
func (t *Target) nameRing(th *thread, r *perfRing) {
	pid := th.proc
	if pid == 0 {
		pid = t.pid
	}
	if name := readComm(pid, th.tid); name != "" {
		r.name = name
	}
}

// commRecord returns the thread and the name of a comm record's first
// bytes (the header, pid, tid, then the name, NUL-padded; at least 16).
func commRecord(rec []byte) (tid uint32, name []byte) {
	tid, name = binary.LittleEndian.Uint32(rec[12:]), rec[16:]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	return tid, name
}

// noteComm takes the name of the comm record at at (size bytes: the
// header, pid, tid, then the name, NUL-terminated) if it names r's thread:
// the samples after it have that name. It allocates only when the name
// changed.
func (r *perfRing) noteComm(at, size uint64) {
	const maxComm = 16 // TASK_COMM_LEN
	if size < 16+8 || r.tid == 0 {
		return
	}
	var rec [16 + maxComm]byte
	b := rec[:min(size, uint64(len(rec)))]
	r.readAt(b, at)
	tid, name := commRecord(b)
	if tid != r.tid {
		return
	}
	if len(name) > 0 && string(name) != r.name {
		r.name = string(name)
	}
	r.procName = ""
}

// drainedNames is called once r was drained to its end: a name read from
// /proc since the last drain that none of its records gave (another thread
// renamed its thread) is its name from now on.
func (r *perfRing) drainedNames() {
	if r.procName != "" {
		r.name, r.procName = r.procName, ""
	}
}
