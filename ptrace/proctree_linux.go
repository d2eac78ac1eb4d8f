//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bytes"
	"os"
	"strconv"
	"sync"

	"github.com/macprof/macprof/internal/procstat"
	"golang.org/x/sys/unix"
)

// maxDescendants bounds the processes one Descendants call reports, so that a
// fork bomb under the profiler costs it bounded time and memory.
const maxDescendants = 4096

// ProcessTree finds the descendants of a process, for following the
// processes a launched command starts. It reads each process's
// /proc/PID/task/TID/children files with raw system calls into buffers it
// keeps, so that polling a stable tree allocates nothing and never wakes the
// Go runtime's system monitor. On kernels without those files
// (CONFIG_PROC_CHILDREN unset) it falls back to scanning the parent links of
// every process in /proc.
//
// A process whose parent exited has been re-parented away from the tree and
// is no longer found, as with any parent-link walk. A ProcessTree is not safe
// for concurrent use.
type ProcessTree struct {
	path   []byte
	dents  [8192]byte
	buf    [4096]byte
	queue  []int
	seen   map[int]struct{} // the PIDs in queue
	probed bool             // whether noFile was decided
	noFile bool             // the kernel has no children files: scan /proc instead

	// The answer of the last walk, for root lastRoot, and the PID the
	// system had last allocated then: while no process or thread has
	// been created since, the tree can have gained no one, so the walk is
	// skipped (at most reuseWalks times in a row).
	lastRoot, lastPID, reused int
	last                      []int
	pidSource                 func() int // for tests: replaces lastAllocatedPID
}

// reuseWalks bounds how many calls in a row answer from the last walk, so
// that processes that left the tree (exited, re-parented away) leave the
// answer within that many polls even while nothing forks.
const reuseWalks = 9

// Descendants appends the PIDs of root's living descendants to dst[:0], at
// most maxDescendants of them, and returns it.
//
// While no process or thread was created on the system since the last
// call for the same root (the last PID allocated, from /proc/loadavg, is
// unchanged), the last answer is returned without walking the tree: the
// walk opens a children file for every thread of every process in it, and
// record polls ten times a second.
func (pt *ProcessTree) Descendants(root int, dst []int) []int {
	dst = dst[:0]
	var pid int
	if pt.pidSource != nil {
		pid = pt.pidSource()
	} else {
		pid = pt.lastAllocatedPID()
	}
	if pid > 0 && pid == pt.lastPID && root == pt.lastRoot && pt.reused < reuseWalks {
		pt.reused++
		return append(dst, pt.last...)
	}
	dst = pt.walk(root, dst)
	pt.lastRoot, pt.lastPID, pt.reused = root, pid, 0
	pt.last = append(pt.last[:0], dst...)
	return dst
}

// loadavgPath is the file whose last field is the PID the kernel allocated
// last in the reader's PID namespace (fs/proc/loadavg.c: the namespace's
// idr cursor less one), which every new process and thread advances,
// including those of nested namespaces, which also take a PID in ours.
var loadavgPath = []byte("/proc/loadavg\x00")

// lastAllocatedPID returns the last PID the kernel allocated, or 0 when it
// cannot be read.
func (pt *ProcessTree) lastAllocatedPID() int { return readLastPID(pt.buf[:]) }

// loadavg is /proc/loadavg, opened at its first read and read at offset 0
// from then on (a seq file: each such read makes its text anew): the
// path's lookup, open and close cost twice the read, and the PID watch
// reads it at every tick.
var loadavg struct {
	once sync.Once
	fd   int // -1: it could not be opened
}

// loadavgFD returns the descriptor of /proc/loadavg kept open for the
// process's life, or -1.
func loadavgFD() int {
	loadavg.once.Do(func() {
		fd, err := openRaw(loadavgPath, unix.O_RDONLY|unix.O_CLOEXEC)
		if err != nil {
			fd = -1
		}
		loadavg.fd = fd
	})
	return loadavg.fd
}

// readLastPID reads the last PID the kernel allocated from /proc/loadavg
// into buf, and returns it, or 0 when it cannot be read.
func readLastPID(buf []byte) int {
	fd := loadavgFD()
	if fd < 0 {
		return 0
	}
	n, err := preadRaw(fd, buf)
	if err != nil || n <= 0 || n >= len(buf) {
		return 0
	}
	b := bytes.TrimRight(buf[:n], "\n ")
	if i := bytes.LastIndexByte(b, ' '); i >= 0 {
		b = b[i+1:]
	}
	v, ok := parseUint(b)
	if !ok || v >= 1<<31 {
		return 0
	}
	return int(v)
}

// walk is Descendants without the reuse of the last answer.
func (pt *ProcessTree) walk(root int, dst []int) []int {
	if !pt.probed {
		pt.probed = true
		_, err := os.Stat("/proc/thread-self/children")
		pt.noFile = err != nil
	}
	if pt.noFile {
		return scanDescendants(root, dst)
	}
	pt.queue = append(pt.queue[:0], root)
	if pt.seen == nil {
		pt.seen = make(map[int]struct{})
	}
	clear(pt.seen)
	pt.seen[root] = struct{}{}
	// Breadth first: the queue is root and then its descendants, at most
	// maxDescendants of them (push bounds it).
	for i := 0; i < len(pt.queue); i++ {
		pt.children(pt.queue[i])
	}
	return append(dst, pt.queue[1:]...)
}

// children appends the children of every thread of pid to pt.queue. A
// process or thread that exits meanwhile simply has none.
func (pt *ProcessTree) children(pid int) {
	pt.path = strconv.AppendInt(append(pt.path[:0], "/proc/"...), int64(pid), 10)
	pt.path = append(pt.path, "/task\x00"...)
	dir, err := openRaw(pt.path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return
	}
	defer closeRaw(dir)
	base := len(pt.path) - 1 // "/proc/PID/task"
	for {
		n, err := getdentsRaw(dir, pt.dents[:])
		if err != nil || n <= 0 {
			return
		}
		for b := pt.dents[:n]; ; {
			var name []byte
			if name, b = nextDirent(b); name == nil {
				break
			}
			if _, isNum := parseUint(name); !isNum {
				continue
			}
			pt.path = append(append(append(pt.path[:base], '/'), name...), "/children\x00"...)
			pt.readChildren() // a thread that exited meanwhile has no children
		}
	}
}

// readChildren reads the children file named by pt.path and appends the
// PIDs in it to pt.queue (bounded by maxDescendants).
func (pt *ProcessTree) readChildren() error {
	fd, err := openRaw(pt.path, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return err
	}
	defer closeRaw(fd)
	var cur uint64
	inNum := false
	for off := int64(0); ; {
		n, err := preadAtRaw(fd, pt.buf[:], off)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		off += int64(n)
		for _, c := range pt.buf[:n] {
			if c >= '0' && c <= '9' {
				if cur < 1<<32 {
					cur = cur*10 + uint64(c-'0')
				}
				inNum = true
				continue
			}
			if inNum {
				pt.push(cur)
			}
			cur, inNum = 0, false
		}
	}
	if inNum {
		pt.push(cur)
	}
	return nil
}

// push adds pid to the queue unless it is there already or the queue
// holds root and maxDescendants descendants.
func (pt *ProcessTree) push(pid uint64) {
	if pid == 0 || pid >= 1<<31 || len(pt.queue) > maxDescendants {
		return
	}
	if _, dup := pt.seen[int(pid)]; dup {
		return // listed twice while it was being re-parented
	}
	pt.seen[int(pid)] = struct{}{}
	pt.queue = append(pt.queue, int(pid))
}

// scanDescendants finds root's descendants from the parent links in every
// /proc/PID/stat (the fallback when children files are missing).
func scanDescendants(root int, dst []int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return dst
	}
	parent := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, err := procstat.Read(pid); err == nil && s.Has(procstat.FieldPPID) {
			parent[pid] = s.PPID
		}
	}
	for pid := range parent {
		for p, depth := parent[pid], 0; p != 0 && depth < 64; p, depth = parent[p], depth+1 {
			if p == root {
				if len(dst) < maxDescendants {
					dst = append(dst, pid)
				}
				break
			}
		}
	}
	return dst
}
