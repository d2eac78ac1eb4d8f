//go:build linux

package ptrace

import (
	"os"
	"strconv"
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
