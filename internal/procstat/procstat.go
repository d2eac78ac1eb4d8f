// Package procstat parses Linux's /proc/PID/stat and
// /proc/PID/task/TID/stat lines (proc(5)), in one place for every package
// that reads a process's state, parent, terminal or CPU time.
//
// The parser is plain Go on bytes, so it builds and is tested on every OS;
// only Read and ReadTask need a /proc. Parse does not allocate, since the
// Linux backend reads a thread's stat while it samples.
package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// Field numbers of a stat line, 1-based as proc(5) numbers them.
const (
	FieldPID        = 1
	FieldComm       = 2
	FieldState      = 3
	FieldPPID       = 4
	FieldPGRP       = 5
	FieldSession    = 6
	FieldTTYNr      = 7
	FieldTPGID      = 8
	FieldFlags      = 9
	FieldUTime      = 14
	FieldSTime      = 15
	FieldNumThreads = 20
	FieldStartTime  = 22
	FieldProcessor  = 39
)

// ClockTicks is USER_HZ, the unit of UTime, STime and StartTime: 100 on
// every Linux architecture Go supports.
const ClockTicks = 100

// Stat is what a stat line says of a process or thread. A field the line
// does not reach (a line read into a short buffer) is zero: Has says
// which are there.
type Stat struct {
	PID int
	// Comm is the name between the parentheses, which may hold any byte
	// but NUL and newline, ')' and ' ' included. It aliases the parsed
	// line.
	Comm    []byte
	State   byte // 'R', 'S', 'D', 'T', 't', 'Z', 'X', ...
	PPID    int
	PGRP    int
	Session int
	TTYNr   int
	TPGID   int // -1 when the process has no controlling terminal
	Flags   uint64
	UTime   uint64 // clock ticks in user mode
	STime   uint64 // clock ticks in kernel mode
	// NumThreads, StartTime (clock ticks after boot) and Processor (the
	// CPU it last ran on).
	NumThreads int
	StartTime  uint64
	Processor  int
	// Fields is how many fields the line holds.
	Fields int
}

// Has reports whether the line reached field n (a Field constant).
func (s *Stat) Has(n int) bool { return n <= s.Fields }

// CPUTicks is UTime+STime.
func (s *Stat) CPUTicks() uint64 { return s.UTime + s.STime }

// ErrFormat is wrapped by Parse's errors: the line is not a stat line.
var ErrFormat = errors.New("procstat: malformed stat line")

// Parse parses a stat line. The name runs from the first '(' to the last
// ')', since it may hold both; the fields after it are separated by
// spaces. It needs the line to reach the state (field 3); a later field
// that is there must be a number.
func Parse(b []byte) (Stat, error) {
	var s Stat
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return s, fmt.Errorf("%w: no (comm)", ErrFormat)
	}
	pid, ok := parseInt(bytes.TrimRight(b[:open], " "))
	if !ok {
		return s, fmt.Errorf("%w: pid %.20q", ErrFormat, b[:open])
	}
	s.PID, s.Comm, s.Fields = int(pid), b[open+1:end], 2
	for j := end + 1; j < len(b); {
		for j < len(b) && b[j] == ' ' {
			j++
		}
		start := j
		for j < len(b) && b[j] != ' ' && b[j] != '\n' {
			j++
		}
		if start == j {
			break
		}
		s.Fields++
		if err := s.set(s.Fields, b[start:j]); err != nil {
			return s, err
		}
	}
	if s.Fields < FieldState {
		return s, fmt.Errorf("%w: no state after the name", ErrFormat)
	}
	return s, nil
}

// set stores field n, f, if Stat holds it.
func (s *Stat) set(n int, f []byte) error {
	if n == FieldState {
		if len(f) != 1 {
			return fmt.Errorf("%w: state %.20q", ErrFormat, f)
		}
		s.State = f[0]
		return nil
	}
	var dst *int
	var udst *uint64
	switch n {
	case FieldPPID:
		dst = &s.PPID
	case FieldPGRP:
		dst = &s.PGRP
	case FieldSession:
		dst = &s.Session
	case FieldTTYNr:
		dst = &s.TTYNr
	case FieldTPGID:
		dst = &s.TPGID
	case FieldNumThreads:
		dst = &s.NumThreads
	case FieldProcessor:
		dst = &s.Processor
	case FieldFlags:
		udst = &s.Flags
	case FieldUTime:
		udst = &s.UTime
	case FieldSTime:
		udst = &s.STime
	case FieldStartTime:
		udst = &s.StartTime
	default:
		return nil
	}
	if dst != nil {
		v, ok := parseInt(f)
		if !ok {
			return fmt.Errorf("%w: field %d %.20q is not a number", ErrFormat, n, f)
		}
		*dst = int(v)
		return nil
	}
	v, ok := parseUint(f)
	if !ok {
		return fmt.Errorf("%w: field %d %.20q is not a number", ErrFormat, n, f)
	}
	*udst = v
	return nil
}

// parseUint parses b, all decimal digits, refusing a value past 64 bits.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' || v > (1<<64-1-uint64(c-'0'))/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// parseInt parses b, decimal digits with an optional '-', within 32 bits
// (every int field of a stat line is a C int).
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	v, ok := parseUint(b)
	if !ok || v > 1<<31 || !neg && v == 1<<31 {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// Read reads and parses /proc/PID/stat.
func Read(pid int) (Stat, error) {
	return readFile("/proc/" + strconv.Itoa(pid) + "/stat")
}

// ReadTask reads and parses /proc/PID/task/TID/stat, one thread's.
func ReadTask(pid, tid int) (Stat, error) {
	return readFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/stat")
}

func readFile(path string) (Stat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	s, err := Parse(b)
	if err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
