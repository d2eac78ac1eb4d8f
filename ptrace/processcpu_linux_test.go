package ptrace

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
)

// statCPU is a process's utime+stime from /proc/PID/stat, which, like the
// process CPU clock, counts its ended threads; it has clock-tick resolution.
func statCPU(t *testing.T, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * (time.Second / 100)
}

func TestProcessCPU(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "deep.c"), "2", "10")
	tg, err := Attach(p.PID, target.Options{Continuous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	deadline := time.Now().Add(30 * time.Second)
	for statCPU(t, p.PID) < 200*time.Millisecond && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	before := statCPU(t, p.PID)
	got, err := tg.ProcessCPU()
	after := statCPU(t, p.PID)
	if err != nil {
		t.Fatal(err)
	}
	// The clock is read between the two /proc reads; /proc rounds down to
	// a clock tick and its ticks are sampled, so allow two ticks each way.
	if slack := 20 * time.Millisecond; got < before-slack || got > after+slack {
		t.Errorf("process CPU clock %v, /proc says %v..%v", got, before, after)
	}
}
