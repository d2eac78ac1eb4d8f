//go:build linux && (amd64 || arm64)

package ptrace

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestStatField(t *testing.T) {
	// A command name with spaces and parentheses: fields count from the
	// last ')'.
	line := []byte("42 (a) b (c)) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 7 38\n")
	for _, tc := range []struct {
		n    int
		want string
		ok   bool
	}{{3, "R", true}, {4, "1", true}, {14, "11", true}, {39, "7", true}, {40, "38", true}, {41, "", false}, {2, "", false}} {
		got, ok := statField(line, tc.n)
		if string(got) != tc.want || ok != tc.ok {
			t.Errorf("statField(%d) = %q, %v; want %q, %v", tc.n, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := statField([]byte("no parenthesis"), 3); ok {
		t.Error("a line without ')' has fields")
	}
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
// controls (a thread's name is its own choice: spaces, parentheses,
// digits): they must not panic, must return slices of their input, and the
// getdents decoder must always make progress.
func FuzzProcParsers(f *testing.F) {
	f.Add([]byte("42 (a) b (c)) R 1 2 3 4 5 6 7 8 9 10 11 12 13\n"), 39)
	f.Add([]byte("1 (x) S 0 0 0 0 -1 0 0 0 0 0 17 4 0 0 20 0 1 0 5 0 0\n"), 15)
	f.Add([]byte(")))"), 3)
	f.Add(dirent("1234"), 4)
	f.Add(append(dirent("."), dirent("98765")...), 3)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if v, ok := statField(b, n); ok && len(v) > len(b) {
			t.Fatalf("field longer than its line")
		}
		parseStat(b)
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
