//go:build linux && (amd64 || arm64)

package ptrace

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// threadCommRecord is a PERF_RECORD_COMM of process rings: header, pid, tid, the
// name padded with NULs to 8 bytes, sample_id (pid, tid, time).
func threadCommRecord(pid, tid uint32, name string, time uint64, exec bool) []byte {
	n := (len(name) + 8) &^ 7
	rec := make([]byte, 16+n+16)
	le := binary.LittleEndian
	le.PutUint32(rec, unix.PERF_RECORD_COMM)
	if exec {
		le.PutUint16(rec[4:], unix.PERF_RECORD_MISC_COMM_EXEC)
	}
	le.PutUint16(rec[6:], uint16(len(rec)))
	le.PutUint32(rec[8:], pid)
	le.PutUint32(rec[12:], tid)
	copy(rec[16:], name)
	le.PutUint32(rec[len(rec)-16:], pid)
	le.PutUint32(rec[len(rec)-12:], tid)
	le.PutUint64(rec[len(rec)-8:], time)
	return rec
}

// threadForkRecord is a PERF_RECORD_FORK: header, pid, ppid, tid, ptid, time,
// sample_id.
func threadForkRecord(pid, ppid, tid, ptid uint32, time uint64) []byte {
	rec := make([]byte, 8+24+16)
	le := binary.LittleEndian
	le.PutUint32(rec, unix.PERF_RECORD_FORK)
	le.PutUint16(rec[6:], uint16(len(rec)))
	le.PutUint32(rec[8:], pid)
	le.PutUint32(rec[12:], ppid)
	le.PutUint32(rec[16:], tid)
	le.PutUint32(rec[20:], ptid)
	le.PutUint64(rec[24:], time)
	le.PutUint64(rec[len(rec)-8:], time)
	return rec
}

// TestThreadNamesFromRecords: names follow the records in time order, not
// in the order read (two CPUs' rings): a thread created before its creator
// renamed itself keeps the old name, one created after takes the new one,
// a thread that renames itself has its own, an exec renames, a tid reused
// by a child of an unnamed thread loses the name it had, torn records
// change nothing, and a thread that exited keeps its name until the next
// collect.
func TestThreadNamesFromRecords(t *testing.T) {
	var n threadNames
	n.seed(100, "cmd")
	for _, rec := range [][]byte{
		// CPU 1's ring, read first.
		threadForkRecord(100, 100, 102, 100, 30), // after 100's rename
		threadCommRecord(100, 103, "pool-1", 50, false),
		threadCommRecord(200, 200, "child-prog", 70, true), // exec
		threadForkRecord(100, 999, 104, 999, 80),           // 104 reused; 999 unknown
		// CPU 0's ring.
		threadForkRecord(100, 100, 101, 100, 10), // before
		threadCommRecord(100, 100, "main-renamed", 20, false),
		threadForkRecord(100, 100, 103, 102, 40),
		threadForkRecord(200, 100, 200, 101, 60),
		threadCommRecord(100, 104, "old", 5, false),
		// Torn: too short to hold a sample_id, and a fork cut short.
		threadCommRecord(100, 105, "x", 1, false)[:24],
		threadForkRecord(100, 100, 106, 100, 1)[:30],
	} {
		n.note(rec)
	}
	n.apply()
	want := map[uint32]string{
		100: "main-renamed", 101: "cmd", 102: "main-renamed", 103: "pool-1",
		104: "", 105: "", 106: "", 200: "child-prog",
	}
	for tid, name := range want {
		if got := n.of(tid); got != name {
			t.Errorf("thread %d: %q, want %q", tid, got, name)
		}
	}
	// Later records (a later collect) build on what was known.
	n.note(threadForkRecord(100, 100, 107, 103, 90))
	n.note(threadExitRecord(100, 100, 102, 100, 95))
	n.apply()
	if got := n.of(107); got != "pool-1" {
		t.Errorf("thread 107, created by 103 at a later collect: %q, want pool-1", got)
	}
	if got := n.of(102); got != "main-renamed" {
		t.Errorf("thread 102, exited at this collect: %q, want main-renamed until the next", got)
	}
	n.apply()
	if got := n.of(102); got != "" {
		t.Errorf("thread 102, exited a collect ago: %q, want forgotten", got)
	}
}

// threadExitRecord is a PERF_RECORD_EXIT: laid out as a fork record.
func threadExitRecord(pid, ppid, tid, ptid uint32, time uint64) []byte {
	rec := threadForkRecord(pid, ppid, tid, ptid, time)
	binary.LittleEndian.PutUint32(rec, unix.PERF_RECORD_EXIT)
	return rec
}

// TestThreadNamesBounded: a command that creates threads without end, each
// exiting soon after, has each named while the table holds only those not
// yet listed after their exit; with more than maxNamed threads alive, the
// table stops at maxNamed and the threads named keep their names; a
// collect keeps at most maxNameEvents records.
func TestThreadNamesBounded(t *testing.T) {
	var n threadNames
	n.seed(1, "cmd")
	tid := uint32(2)
	for round := 0; round < 4; round++ {
		for i := 0; i < maxNameEvents/2; i++ {
			n.note(threadForkRecord(1, 1, tid, 1, uint64(2*tid)))
			n.note(threadExitRecord(1, 1, tid, 1, uint64(2*tid+1)))
			tid++
		}
		n.apply()
		if got := n.of(tid - 1); got != "cmd" {
			t.Fatalf("round %d: thread %d, exited at this collect: %q, want cmd", round, tid-1, got)
		}
		if len(n.cur) > maxNameEvents/2+1 {
			t.Fatalf("round %d: %d threads named, want those of the last collect and the command's", round, len(n.cur))
		}
	}
	n.apply()
	if len(n.cur) != 1 || n.of(1) != "cmd" {
		t.Errorf("after the exited threads were listed, %d threads named, want the command's alone", len(n.cur))
	}
	for i := 0; i < maxNameEvents+10; i++ {
		n.note(threadForkRecord(1, 1, tid, 1, uint64(2*tid)))
		tid++
	}
	if len(n.events) != maxNameEvents {
		t.Fatalf("%d records kept, want %d", len(n.events), maxNameEvents)
	}
	n.apply()
	if len(n.cur) != maxNamed || n.of(1) != "cmd" {
		t.Errorf("%d threads named (want %d), the command %q (want cmd)", len(n.cur), maxNamed, n.of(1))
	}
}

// TestThreadNamesNoAllocation: a collect with no record to note allocates
// nothing, and looking a name up neither.
func TestThreadNamesNoAllocation(t *testing.T) {
	var n threadNames
	n.seed(1, "cmd")
	n.note(threadForkRecord(1, 1, 2, 1, 1))
	n.apply()
	if a := testing.AllocsPerRun(100, func() {
		n.apply()
		if n.of(2) != "cmd" {
			t.Fatal("thread 2 lost its name")
		}
	}); a != 0 {
		t.Errorf("%.1f allocations per apply and lookup, want 0", a)
	}
}

// TestProcessRingsNameThreads: through a collect of two CPUs' rings, the
// command's thread has the name it had at its exec, the thread it created
// the name it gave itself (on the other CPU, before it exited), and a
// sample the kernel wrote no thread id in belongs to no thread.
func TestProcessRingsNameThreads(t *testing.T) {
	r0, r1 := fakeRing(4096), fakeRing(4096)
	p := newFakeProcessRings(100, r0, r1)
	p.names.seed(100, "cmd")
	r0.write(threadForkRecord(100, 100, 101, 100, 2))
	r1.write(threadCommRecord(100, 101, "worker", 3, false))
	r1.write(processRecordAt(4, 100, 101, 0x1000))
	r0.write(processRecordAt(6, 100, 100, 0x2000))
	r0.write(threadExitRecord(100, 100, 101, 100, 7))
	r0.write(processRecordAt(8, ^uint32(0), ^uint32(0), 0x3000))
	p.collect()
	got := map[int]string{}
	for _, ts := range p.threadsWithSamples(nil) {
		got[ts.tid] = ts.name
	}
	if len(got) != 2 || got[100] != "cmd" || got[101] != "worker" {
		t.Errorf("threads with samples and their names %v, want 100 cmd and 101 worker", got)
	}
}
