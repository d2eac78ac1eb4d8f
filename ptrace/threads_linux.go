//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/macprof/macprof/target"
	"golang.org/x/sys/unix"
)

// The thread table: the threads a Target knows, their /proc files and the
// thread listing. A persistent target adds threads as their clone events
// arrive; a continuous one lists /proc/PID/task on every Threads call.

// thread is one thread of the target, in the thread table.
type thread struct {
	tid   int
	proc  int // the process of a descendant's thread process rings sampled; 0: the target's
	files threadFiles
	// For Info.
	name   string
	nameAt time.Time
	// nameWatch's state: its gen when name was read, the wait before
	// the next read.
	nameGen  uint64
	nameWait time.Duration
	lastCPU  time.Duration // CPU time at the previous Info call
	// lastWaited is its time runnable on a run queue then (schedstat).
	lastWaited time.Duration
	// A descendant's thread descendant rings sampled: the periods of its
	// samples so far, and the CPU time it used by the kernel's count at
	// its exit (0 until then).
	sampled, exitCPU time.Duration
	// tracked: a descendant's thread listDescendantThreads follows, kept
	// listed until ended, the kernel's report of its exit, so that its
	// CPU time (its samples' periods) is never restarted while it sleeps.
	tracked, ended bool
	gen            uint64 // listing generation that last saw the thread (continuous mode)
	// held is true while the thread sits in a ptrace-stop that we consumed
	// with wait4 and have not resumed yet (see hold).
	held      bool
	heldSig   int          // signal to inject when resuming (signal-delivery-stop)
	groupStop bool         // the stop is a group-stop: resume with PTRACE_LISTEN
	stop      threadStop   // stop-per-capture (continuous mode)
	kernel    threadKernel // kernel samples (Options.Kernel.Period)
}

// closeFiles closes what is open for the thread.
func (th *thread) closeFiles() {
	th.files.close()
	th.kernel.closeRing()
}

// addThread adds tid to the thread table, unless it is there already
// (persistent mode).
func (t *Target) addThread(tid int) *thread {
	if th, ok := t.threads[tid]; ok {
		return th
	}
	th := &thread{tid: tid, files: openThreadFiles(t.pid, tid)}
	t.stateMu.Lock()
	t.threads[tid] = th
	t.stateMu.Unlock()
	delete(t.gone, tid)
	return th
}

// dropThread removes tid from the thread table, remembering it until it is
// reaped, and notes the process's exit when its leader was reaped or no
// thread is left.
func (t *Target) dropThread(tid int, reaped bool) {
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	if th, ok := t.threads[tid]; ok {
		th.closeFiles()
		delete(t.threads, tid)
	}
	if !reaped {
		if len(t.gone) < 4096 {
			t.gone[tid] = struct{}{}
		}
	} else {
		delete(t.gone, tid)
	}
	if tid == t.pid && reaped || len(t.threads) == 0 {
		t.exited = true
	}
}

// dying reports whether a thread that would not stop is exiting: gone from
// /proc, a zombie, or dead.
func (t *Target) dying(th *thread) bool {
	var buf [256]byte
	st, err := th.files.state(buf[:])
	if err != nil || st == 'Z' || st == 'X' || st == 'x' {
		return true
	}
	_, err = os.Stat(fmt.Sprintf("/proc/%d/task/%d", t.pid, th.tid))
	return err != nil
}

// info reads a thread's CPU time, state and (when nameWatch says) name.
func (t *Target) info(tid int) (target.ThreadInfo, error) {
	th, ok := t.threads[tid]
	if !ok {
		if th, ok := t.departed[tid]; ok {
			// Gone, with samples still to drain: as it last was.
			return target.ThreadInfo{ID: target.ThreadID(tid), Name: th.name, CPUTime: th.lastCPU, PID: th.proc}, nil
		}
		return target.ThreadInfo{}, threadErr(tid, target.ErrNoThread)
	}
	cpu, waited, err := th.files.cpuTime(t.infoBuf[:])
	if err != nil {
		if errors.Is(err, unix.ESRCH) || errors.Is(err, unix.ENOENT) {
			// Listed, then ended before this read: gone, not a failure.
			return target.ThreadInfo{ID: target.ThreadID(tid)}, fmt.Errorf("thread %d: %w (%w)", tid, target.ErrNoThread, err)
		}
		return target.ThreadInfo{ID: target.ThreadID(tid)}, fmt.Errorf("thread %d: CPU time: %w", tid, err)
	}
	// The state letter would cost a read of /proc/.../stat, the most
	// expensive file here, on every tick: running means "used CPU, or
	// waited on a run queue for a CPU, since the previous call" instead.
	running := cpu != th.lastCPU || waited != th.lastWaited
	th.lastCPU, th.lastWaited = cpu, waited
	if now := time.Now(); t.names.due(th, now) {
		t.readThreadName(th)
		t.names.read(th, now)
	}
	return target.ThreadInfo{ID: target.ThreadID(tid), Name: th.name, CPUTime: cpu, Running: running}, nil
}

// readThreadName refreshes th.name from /proc/PID/task/TID/comm. It
// allocates only when the name changed. The caller holds stateMu.
func (t *Target) readThreadName(th *thread) {
	p := append(t.pathBuf[:0], "/proc/"...)
	p = strconv.AppendInt(p, int64(t.pid), 10)
	p = append(p, "/task/"...)
	p = strconv.AppendInt(p, int64(th.tid), 10)
	p = append(p, "/comm\x00"...)
	t.names.reads++
	n, err := readFileRaw(p, t.infoBuf[:])
	if err != nil {
		return
	}
	if name := bytes.TrimRight(t.infoBuf[:n], "\n"); len(name) > 0 && string(name) != th.name {
		th.name = string(name)
	}
}

// taskList lists a continuous target's threads from /proc/PID/task
// through a directory kept open, under stateMu.
type taskList struct {
	dir int // -1 until opened
	gen uint64
	// pidfd tells the process's exit at the cost of a poll (pidfdExited),
	// once pidfdTried opened it (-1: the kernel has none).
	pidfd      int
	pidfdTried bool
	zombieAt   time.Time // when the process was last looked at for an exit
	statAt     time.Time // when the threads' states were last read for it
	statReads  int       // how many times they were
	buf        [8192]byte
}

// close closes the directory and the pidfd.
func (l *taskList) close() {
	if l.dir >= 0 {
		closeFD(l.dir)
		l.dir = -1
	}
	if l.pidfdTried && l.pidfd >= 0 {
		closeFD(l.pidfd)
		l.pidfd = -1
	}
}

// refreshThreads re-reads /proc/PID/task into the thread table (continuous
// mode). The caller holds stateMu. It does not allocate while the set of
// threads stays the same.
func (t *Target) refreshThreads() error {
	l := t.tasks
	if l.dir < 0 {
		fd, err := openFile(fmt.Sprintf("/proc/%d/task", t.pid), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
		if err != nil {
			t.exited = true
			return target.ErrExited
		}
		l.dir = fd
	}
	if err := seekStartRaw(l.dir); err != nil {
		return fmt.Errorf("list threads of PID %d: %w", t.pid, err)
	}
	l.gen++
	live := 0
	for {
		n, err := getdentsRaw(l.dir, l.buf[:])
		if err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
				t.exited = true
				return target.ErrExited
			}
			return fmt.Errorf("list threads of PID %d: %w", t.pid, err)
		}
		if n <= 0 {
			break
		}
		for b := l.buf[:n]; ; {
			var name []byte
			if name, b = nextDirent(b); name == nil {
				break
			}
			tid, ok := parseUint(name)
			if ok && tid > 0 && tid < 1<<31 {
				th, have := t.threads[int(tid)]
				if !have {
					// An id reused already: the exited
					// thread's samples go.
					t.forgetDeparted(int(tid))
					th = &thread{tid: int(tid), files: openThreadFiles(t.pid, int(tid))}
					t.threads[int(tid)] = th
				}
				th.gen = l.gen
				t.names.noteComms(th.kernel.ring)
				live++
			}
		}
	}
	for tid, th := range t.threads {
		if th.gen != l.gen {
			delete(t.threads, tid)
			if th.kernel.ring != nil && th.kernel.ring.unread() || t.processRings() != nil {
				// (With process rings, samples it took since the
				// last collect may still be in them.)
				th.files.close()
				th.gen = l.gen
				t.departed[tid] = th
				continue
			}
			th.closeFiles()
		}
	}
	for tid, th := range t.departed {
		if l.gen-th.gen > 2 && (!th.tracked || th.ended) {
			t.forgetDeparted(tid)
		}
	}
	if live == 0 {
		t.exited = true
		return target.ErrExited
	}
	// A process whose threads are all zombies has exited (its leader
	// waits for its parent, a traced thread for its tracer). Look every
	// zombieCheckEvery: at its pidfd, which tells of an exit whose threads
	// are all gone but the leader; and at the states, which cost more
	// than the listing (the leader's first, and the others only when it
	// is a zombie, as it is alone only after it called pthread_exit), as
	// often only without a pidfd, else every zombieStatEvery, for threads
	// a tracer of their own has yet to reap.
	if now := time.Now(); now.Sub(l.zombieAt) >= zombieCheckEvery {
		l.zombieAt = now
		if !l.pidfdTried {
			l.pidfdTried = true
			if fd, err := pidfdOpen(t.pid); err == nil {
				l.pidfd = fd
			} else {
				l.pidfd = -1
			}
		}
		statEvery := zombieCheckEvery
		if l.pidfd >= 0 {
			if pidfdExited(l.pidfd) {
				t.exited = true
				return target.ErrExited
			}
			statEvery = zombieStatEvery
		}
		if now.Sub(l.statAt) >= statEvery {
			l.statAt = now
			l.statReads++
			if t.allZombies() {
				t.exited = true
				return target.ErrExited
			}
		}
	}
	return nil
}

// allZombies reports whether every listed thread is a zombie or dead. The
// caller holds stateMu.
func (t *Target) allZombies() bool {
	if th := t.threads[t.pid]; th != nil && !zombie(th, t.infoBuf[:]) {
		return false
	}
	for tid, th := range t.threads {
		if tid != t.pid && !zombie(th, t.infoBuf[:]) {
			return false
		}
	}
	return true
}

// zombie reports whether the thread is a zombie, dead, or gone.
func zombie(th *thread, buf []byte) bool {
	st, err := th.files.state(buf)
	return err != nil || st == 'Z' || st == 'X' || st == 'x'
}

// forgetDeparted closes the ring of a departed thread, if tid is one, and
// forgets it. The caller holds stateMu.
func (t *Target) forgetDeparted(tid int) {
	if th, ok := t.departed[tid]; ok {
		th.closeFiles()
		delete(t.departed, tid)
	}
}

// zombieCheckEvery is how often a target's leader's state is read to find
// a process whose threads are all zombies.
const zombieCheckEvery = 100 * time.Millisecond

// zombieStatEvery is how often the states are read when a pidfd tells of
// the common exits: each read of a thread's stat costs about 25 us of
// kernel time, a tenth of what a 99 Hz recording's tick costs.
const zombieStatEvery = time.Second

// ProcessCPU returns the CPU time the whole process used so far, its ended
// threads included (target.ProcessCPUReporter).
func (t *Target) ProcessCPU() (time.Duration, error) {
	d, err := processCPUClock(t.pid)
	if err != nil {
		return 0, fmt.Errorf("process %d CPU time: %w", t.pid, err)
	}
	return d, nil
}
