//go:build linux && (amd64 || arm64)

package ptrace

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/macprof/macprof/internal/procstat"
	"golang.org/x/sys/unix"
)

// parseStat returns a thread's state letter and utime+stime from its stat
// line, for the tests that wait for a state.
func parseStat(b []byte) (state byte, ticks uint64, ok bool) {
	s, err := procstat.Parse(b)
	return s.State, s.CPUTicks(), err == nil && s.Has(procstat.FieldSTime)
}

func TestStateCPUOfThisThread(t *testing.T) {
	tid := unix.Gettid()
	tf := openThreadFiles(os.Getpid(), tid)
	defer tf.close()
	var buf [512]byte
	st, cpu, err := tf.stateCPU(buf[:])
	if err != nil {
		t.Fatal(err)
	}
	if st != 'R' {
		t.Errorf("state of the running thread %d = %c, want R", tid, st)
	}
	n := runtimeCPUs(t)
	if cpu < 0 || cpu >= n {
		t.Errorf("CPU of thread %d = %d, want one of the %d CPUs", tid, cpu, n)
	}
}

// runtimeCPUs returns the number of possible CPU ids, from
// /sys/devices/system/cpu/possible ("0-N").
func runtimeCPUs(t *testing.T) int {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '-' || s[i] == ',' {
			s = s[i+1:]
			break
		}
	}
	v, err := strconv.Atoi(trimNL(s))
	if err != nil {
		t.Fatalf("parse %q: %v", b, err)
	}
	return v + 1
}

func trimNL(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == ' ') {
		s = s[:len(s)-1]
	}
	return s
}

// FuzzProcParsers feeds the /proc parsers bytes a hostile target partly
// controls: they must not panic, and the getdents decoder must always make
// progress. (Stat lines, whose thread names are the target's choice, are
// procstat's FuzzParse.)
func FuzzProcParsers(f *testing.F) {
	f.Add([]byte("42 (a) b (c)) R 1 2 3 4 5 6 7 8 9 10 11 12 13\n"), 39)
	f.Add([]byte("1 (x) S 0 0 0 0 -1 0 0 0 0 0 17 4 0 0 20 0 1 0 5 0 0\n"), 15)
	f.Add([]byte(")))"), 3)
	f.Add(dirent("1234"), 4)
	f.Add(append(dirent("."), dirent("98765")...), 3)
	f.Fuzz(func(t *testing.T, b []byte, _ int) {
		parseUint(b)
		for rest, steps := b, 0; ; steps++ {
			if steps > len(b) {
				t.Fatal("nextDirent made no progress")
			}
			var name []byte
			if name, rest = nextDirent(rest); name == nil {
				break
			}
			if len(name) > len(b) {
				t.Fatal("name longer than the buffer")
			}
		}
	})
}

// dirent encodes one linux_dirent64 record named name.
func dirent(name string) []byte {
	reclen := (19 + len(name) + 1 + 7) &^ 7
	b := make([]byte, reclen)
	b[16], b[17] = byte(reclen), byte(reclen>>8)
	copy(b[19:], name)
	return b
}

func TestNextDirent(t *testing.T) {
	buf := append(append(dirent("."), dirent("..")...), dirent("31337")...)
	var names []string
	for b := buf; ; {
		var name []byte
		if name, b = nextDirent(b); name == nil {
			break
		}
		names = append(names, string(name))
	}
	if strings.Join(names, ",") != ".,..,31337" {
		t.Fatalf("names %q", names)
	}
	// A record claiming more than the buffer ends the listing.
	bad := dirent("7")
	bad[16] = 200
	if name, _ := nextDirent(bad); name != nil {
		t.Fatalf("truncated record gave %q", name)
	}
}
