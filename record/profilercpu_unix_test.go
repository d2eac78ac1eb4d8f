//go:build unix

package record

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

// burnCPU spins until macprof's process has used d more CPU time.
func burnCPU(t *testing.T, d time.Duration) {
	start, ok := selfCPU()
	if !ok {
		t.Fatal("getrusage(RUSAGE_SELF) failed")
	}
	for x := uint64(1); ; x = x*6364136223846793005 + 1 {
		if now, _ := selfCPU(); now-start >= d {
			sink = x
			return
		}
	}
}

var sink uint64

// cpuClosed is a fake target that spends CPU time when it is closed, after
// the sampling window.
type cpuClosed struct {
	*targettest.Fake
	t    *testing.T
	burn time.Duration
}

func (c *cpuClosed) Close() error {
	burnCPU(c.t, c.burn)
	return c.Fake.Close()
}

// TestSummaryProfilerCPUIsTheWholeRun: the summary's profiler CPU is all
// macprof used, the attach before the sampling window and the end after
// it included, not only the window's.
func TestSummaryProfilerCPUIsTheWholeRun(t *testing.T) {
	const burn = 150 * time.Millisecond
	before, _ := selfCPU()
	var stderr syncBuffer
	code := Run(context.Background(), Config{
		PID: 5, Hz: 100, Mode: profile.ModeWall, MaxFrames: 64, Duration: 50 * time.Millisecond, Stderr: &stderr,
		Attach: func(pid int, o target.Options) (target.Target, error) {
			burnCPU(t, burn)
			return &cpuClosed{Fake: fake(pid, 0x1111, time.Time{}), t: t, burn: burn}, nil
		},
	})
	used, _ := selfCPU()
	if code != 0 {
		t.Fatalf("Run returned %d:\n%s", code, stderr.String())
	}
	m := regexp.MustCompile(`profiler CPU (\S+)\n`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no profiler CPU in the summary:\n%s", stderr.String())
	}
	got, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	// At least the two burns, at most what the test process had used
	// when Run returned (the figure is the process's, so it includes the
	// test binary's own start and earlier tests).
	if got < 2*burn || got > used.Round(time.Millisecond) {
		t.Errorf("profiler CPU %v, want between the %v burnt at the attach and the close and the %v the process used (%v before Run):\n%s",
			got, 2*burn, used, before, stderr.String())
	}
}
