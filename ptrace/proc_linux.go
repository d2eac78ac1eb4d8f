//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/macprof/macprof/internal/procstat"
	"golang.org/x/sys/unix"
)

// listTasks returns the thread ids in /proc/PID/task.
func listTasks(pid int) ([]int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out, nil
}

// procStatusField returns a field of /proc/PID/status, such as "TracerPid".
func procStatusField(pid int, field string) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// readComm reads /proc/PID/task/TID/comm.
// It is read by raw system calls: a thread's ring is named by it at its
// first capture, while the profiled threads run, and a regular call then
// woke a sleeping sysmon, which polls every 20 µs for its next fifty
// ticks.
func readComm(pid, tid int) string {
	var path [64]byte
	p := append(path[:0], "/proc/"...)
	p = strconv.AppendInt(p, int64(pid), 10)
	p = append(p, "/task/"...)
	p = strconv.AppendInt(p, int64(tid), 10)
	p = append(p, "/comm\x00"...)
	var buf [64]byte // a name is at most 15 bytes and a newline
	n, err := readFileRaw(p, buf[:])
	if err != nil {
		return ""
	}
	return string(bytes.TrimRight(buf[:n], "\n"))
}

// threadFiles keeps a thread's /proc files open so that reading its CPU time
// and state costs one pread each and no allocation. schedstat is read on
// every tick and opened with the thread; stat, read only for stop-mode
// captures and exit checks, is opened on first use, so that an idle thread
// of a large process holds one descriptor, not two.
type threadFiles struct {
	schedstat int // fd of /proc/PID/task/TID/schedstat, or -1
	stat      int // fd of /proc/PID/task/TID/stat, or -1 until first used
	pid, tid  int
}

func openThreadFiles(pid, tid int) threadFiles {
	tf := threadFiles{schedstat: -1, stat: -1, pid: pid, tid: tid}
	if fd, err := openFile(fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, tid), unix.O_RDONLY|unix.O_CLOEXEC); err == nil {
		tf.schedstat = fd
	}
	return tf
}

// statFD returns the fd of the thread's stat file, opening it on first use.
func (tf *threadFiles) statFD() (int, error) {
	if tf.stat >= 0 {
		return tf.stat, nil
	}
	if tf.tid == 0 {
		return -1, errNoProcFile
	}
	var p [64]byte
	b := append(p[:0], "/proc/"...)
	b = strconv.AppendInt(b, int64(tf.pid), 10)
	b = append(b, "/task/"...)
	b = strconv.AppendInt(b, int64(tf.tid), 10)
	b = append(b, "/stat"...)
	fd, err := openFile(string(b), unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return -1, err
	}
	tf.stat = fd
	return fd, nil
}

func (tf *threadFiles) close() {
	if tf.schedstat >= 0 {
		closeFD(tf.schedstat)
		tf.schedstat = -1
	}
	if tf.stat >= 0 {
		closeFD(tf.stat)
		tf.stat = -1
	}
	// Closed for good: a later state read must not reopen the path,
	// which may name another thread by then.
	tf.tid = 0
}

var errNoProcFile = errors.New("thread's /proc files are not open")

// cpuTime returns the thread's CPU time in nanoseconds from schedstat, and
// falls back on utime+stime from stat (clock-tick resolution); waited is
// schedstat's time spent runnable on a run queue, not on a CPU (0 from
// stat).
func (tf *threadFiles) cpuTime(buf []byte) (cpu, waited time.Duration, err error) {
	if tf.schedstat >= 0 {
		n, err := preadRaw(tf.schedstat, buf)
		if err != nil {
			return 0, 0, err
		}
		// 0 is a thread that has not run yet, not a missing figure.
		if v, ok := parseUint(buf[:n]); ok {
			rest := bytes.TrimLeft(bytes.TrimLeft(buf[:n], "0123456789"), " ")
			w, _ := parseUint(rest)
			return time.Duration(v), time.Duration(w), nil
		}
	}
	fd, err := tf.statFD()
	if err != nil {
		return 0, 0, err
	}
	n, err := preadRaw(fd, buf)
	if err != nil {
		return 0, 0, err
	}
	s, err := procstat.Parse(buf[:n])
	if err != nil || !s.Has(procstat.FieldSTime) {
		return 0, 0, errors.New("malformed stat")
	}
	return time.Duration(s.CPUTicks()) * (time.Second / procstat.ClockTicks), 0, nil
}

// state returns the thread's scheduler state letter from stat ('R', 'S', ...).
func (tf *threadFiles) state(buf []byte) (byte, error) {
	st, _, err := tf.stateCPU(buf)
	return st, err
}

// stateCPU returns the thread's scheduler state letter and the CPU it last
// ran on (stat fields 3 and 39), or -1 for the CPU when buf is too short
// to hold that field.
func (tf *threadFiles) stateCPU(buf []byte) (state byte, cpu int, err error) {
	fd, err := tf.statFD()
	if err != nil {
		return 0, -1, err
	}
	n, err := preadRaw(fd, buf)
	if err != nil {
		return 0, -1, err
	}
	s, err := procstat.Parse(buf[:n])
	if err != nil {
		return 0, -1, err
	}
	cpu = -1
	if s.Has(procstat.FieldProcessor) && s.Processor >= 0 && s.Processor < 1<<20 {
		cpu = s.Processor
	}
	return s.State, cpu, nil
}

// parseUint parses the leading decimal number of b.
func parseUint(b []byte) (uint64, bool) {
	var v uint64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + uint64(b[i]-'0')
	}
	return v, i > 0
}

// tracerProcess maps a TracerPid value (the id of the tracing thread) to the
// id of its process, or 0.
func tracerProcess(tracerTID string) int {
	tid, err := strconv.Atoi(strings.TrimSpace(tracerTID))
	if err != nil || tid == 0 {
		return 0
	}
	if v, err := procStatusField(tid, "Tgid"); err == nil {
		if pid, err := strconv.Atoi(v); err == nil {
			return pid
		}
	}
	return tid
}
