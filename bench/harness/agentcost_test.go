package main

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestProcUsage reads this process's CPU time and context switches: both
// grow while it works and sleeps.
func TestProcUsage(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("procUsage reads Linux's /proc")
	}
	cpu0, v0, _, ok := procUsage(os.Getpid())
	if !ok {
		t.Fatal("procUsage of this process: not read")
	}
	for end := time.Now().Add(60 * time.Millisecond); time.Now().Before(end); {
	}
	for range 5 {
		time.Sleep(2 * time.Millisecond)
	}
	cpu1, v1, _, _ := procUsage(os.Getpid())
	if cpu1 <= cpu0 {
		t.Errorf("CPU time did not grow over 60 ms of work: %v then %v", cpu0, cpu1)
	}
	if v1 <= v0 {
		t.Errorf("voluntary switches did not grow over 5 sleeps: %d then %d", v0, v1)
	}
}

// TestResultRow: the row holds the medians of the runs, not the first or
// the mean, and the largest peak RSS.
func TestResultRow(t *testing.T) {
	run := func(cpuMs, vol int64, rssMiB int64) footprint {
		return footprint{wall: 100 * time.Second, user: time.Duration(cpuMs) * time.Millisecond, nvcsw: vol * 100, maxRSSKiB: rssMiB << 10,
			steady: procSpan{wall: 50 * time.Second, cpu: time.Duration(cpuMs/2) * time.Millisecond, nvcsw: vol * 50}}
	}
	agents := []footprint{run(900, 30, 40), run(200, 10, 60), run(300, 20, 50)}
	perfs := []footprint{run(250, 1, 12), run(240, 2, 12), run(100, 1, 13)}
	row := resultRow(50, 3, 2*time.Minute, "abc", agents, perfs, "1.0", "50.0")
	for _, want := range []string{"**0.30%** (0.90, 0.20, 0.30)", "| 0.30% |", "20.0 / 0.0 (steady 20.0 / 0.0)", "60 MiB", "**0.24%** (0.25, 0.24, 0.10)", "13 MiB", "1.0 → 50.0"} {
		if !strings.Contains(row, want) {
			t.Errorf("row lacks %q:\n%s", want, row)
		}
	}
	if n, h := strings.Count(row, "|"), strings.Count(strings.Split(resultHeader, "\n")[0], "|"); n != h {
		t.Errorf("row has %d cells' bars, the header %d:\n%s", n, h, row)
	}
}
