package ptrace

import (
	"testing"
	"time"

	"github.com/macprof/macprof/internal/procstat"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
)

// statCPU is a process's utime+stime from /proc/PID/stat, which, like the
// process CPU clock, counts its ended threads; it has clock-tick resolution.
func statCPU(t *testing.T, pid int) time.Duration {
	s, err := procstat.Read(pid)
	if err != nil || !s.Has(procstat.FieldSTime) {
		t.Fatalf("%+v, %v", s, err)
	}
	return time.Duration(s.CPUTicks()) * (time.Second / procstat.ClockTicks)
}

func TestProcessCPU(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "deep.c"), "2", "10")
	tg, err := Attach(p.PID, target.Options{Continuous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	testprog.WaitFor(t, 30*time.Second, func() bool { return statCPU(t, p.PID) >= 200*time.Millisecond },
		"the target to use 200 ms of CPU, a time to compare")
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
