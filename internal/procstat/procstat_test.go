package procstat

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"testing"
)

// A stat line of a thread named "a) b (c" (a name may hold spaces and
// parentheses), with no terminal (tpgid -1), as Linux 6.8 writes it.
const line = "4242 (a) b (c) S 4200 4242 4100 34817 -1 4194560 1534 0 0 0 17 4 0 0 20 0 3 0 987654 " +
	"10452992 1183 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

func TestParse(t *testing.T) {
	s, err := Parse([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{PID: 4242, Comm: []byte("a) b (c"), State: 'S', PPID: 4200, PGRP: 4242, Session: 4100,
		TTYNr: 34817, TPGID: -1, Flags: 4194560, UTime: 17, STime: 4, NumThreads: 3, StartTime: 987654,
		Processor: 1, Fields: 52}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Parse:\n got %+v\nwant %+v", s, want)
	}
	if s.CPUTicks() != 21 || !s.Has(FieldProcessor) || s.Has(53) {
		t.Errorf("CPUTicks %d, Has(39) %v, Has(53) %v", s.CPUTicks(), s.Has(FieldProcessor), s.Has(53))
	}
}

// TestParseShortLine: a line cut after the flags (read into a short
// buffer) gives the fields it reaches, and says the others are not there.
func TestParseShortLine(t *testing.T) {
	s, err := Parse([]byte(line[:bytes.Index([]byte(line), []byte(" 1534"))]))
	if err != nil {
		t.Fatal(err)
	}
	if s.Flags != 4194560 || !s.Has(FieldFlags) || s.Has(FieldUTime) || s.UTime != 0 {
		t.Errorf("short line: %+v", s)
	}
}

func TestParseMalformed(t *testing.T) {
	for _, b := range []string{
		"",
		"4242 a S 1",              // no parentheses
		"(a) S 1",                 // no pid
		"x (a) S 1",               // pid not a number
		"4242 (a)",                // no state
		"4242 (a) RS 1",           // state of two letters
		"4242 (a) S x",            // ppid not a number
		"4242 (a) S -",            // a lone sign
		"4242 (a) S 1 2 3 4 5 -6", // flags signed
		"4242 (a) S 2147483648",   // ppid past a C int
		"4242 (a) S 1 1 1 1 1 1 1 1 1 1 1 99999999999999999999", // utime past 64 bits
		")( 4242 S",
	} {
		if s, err := Parse([]byte(b)); !errors.Is(err, ErrFormat) {
			t.Errorf("Parse(%q) = %+v, %v; want an ErrFormat", b, s, err)
		}
	}
}

// TestParseDoesNotAllocate: the Linux backend parses a thread's stat
// while it samples.
func TestParseDoesNotAllocate(t *testing.T) {
	b := []byte(line)
	if n := testing.AllocsPerRun(100, func() { _, _ = Parse(b) }); n != 0 {
		t.Errorf("Parse allocates %v times", n)
	}
}

// TestRead reads this process's stat, whose parent is the go command, and
// its main thread's.
func TestRead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc/PID/stat on " + runtime.GOOS)
	}
	s, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.PID != os.Getpid() || s.PPID != os.Getppid() || (s.State != 'R' && s.State != 'S') || !s.Has(FieldProcessor) || s.NumThreads < 1 {
		t.Errorf("Read(self) = %+v", s)
	}
	if s, err := ReadTask(os.Getpid(), os.Getpid()); err != nil || s.PID != os.Getpid() {
		t.Errorf("ReadTask(self, main thread) = %+v, %v", s, err)
	}
	if _, err := Read(-1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read(-1): %v, want a missing file", err)
	}
}

// FuzzParse checks Parse against a plain reading of the same line: the
// pid before '(', the name up to the last ')', then fields split at
// spaces up to the end of the line.
func FuzzParse(f *testing.F) {
	f.Add([]byte(line))
	f.Add([]byte("1 (x) S 0 0 0 0 -1 0 0 0 0 0 17 4\n"))
	f.Add([]byte("7 ()) ) R 1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v is not an ErrFormat", err)
			}
			return
		}
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if !bytes.Equal(s.Comm, b[open+1:end]) || &s.Comm[:1][0] != &b[open+1 : end+1][0] {
			t.Fatalf("Comm %q does not alias the name of %q", s.Comm, b)
		}
		if pid, err := strconv.Atoi(string(bytes.TrimRight(b[:open], " "))); err != nil || pid != s.PID {
			t.Fatalf("PID %d, the line's is %q", s.PID, b[:open])
		}
		rest, _, _ := bytes.Cut(b[end+1:], []byte{'\n'})
		f := bytes.FieldsFunc(rest, func(r rune) bool { return r == ' ' })
		if s.Fields != 2+len(f) || s.Fields < FieldState || s.State != f[0][0] {
			t.Fatalf("Fields %d, State %q; the line has %d fields after the name: %q", s.Fields, s.State, len(f), b)
		}
		for n, got := range map[int]int64{FieldPPID: int64(s.PPID), FieldTPGID: int64(s.TPGID), FieldProcessor: int64(s.Processor)} {
			if n <= s.Fields {
				if want, err := strconv.ParseInt(string(f[n-3]), 10, 32); err != nil || want != got {
					t.Fatalf("field %d = %d, the line's is %q", n, got, f[n-3])
				}
			} else if got != 0 {
				t.Fatalf("field %d = %d past the line's end", n, got)
			}
		}
		if s.Has(FieldSTime) {
			want, err := strconv.ParseUint(string(f[FieldSTime-3]), 10, 64)
			if err != nil || want != s.STime {
				t.Fatalf("stime %d, the line's is %q", s.STime, f[FieldSTime-3])
			}
		}
	})
}
