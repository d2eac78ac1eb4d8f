//go:build linux && (amd64 || arm64)

package main

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
)

// TestRecordNamesEachSampleAsItsThreadWasNamedThen: threads that rename
// themselves while they run (renamemid.c: rm-a 200 ms then rm-a2 1000 ms of
// CPU time; rm-b renamed rm-b2 as its first act, then 1600 ms) have their
// samples split by the name in force when each was taken, as perf report's
// comm does, in pprof's thread label: with each thread's own ring
// (--unwind auto) and with process rings (--unwind fp).
func TestRecordNamesEachSampleAsItsThreadWasNamedThen(t *testing.T) {
	for _, unwind := range []string{"auto", "fp"} {
		t.Run(unwind, func(t *testing.T) { testRecordNamesEachSample(t, unwind) })
	}
}

func testRecordNamesEachSample(t *testing.T, unwind string) {
	macprof, _ := macprofBinary(t)
	thr := testprog.BuildC(t, "renamemid.c")
	out := filepath.Join(t.TempDir(), "rn.pb.gz")
	const hz = 999
	if b, err := exec.Command(macprof, "record", "-q", "--unwind", unwind, "-F", "999", "-o", out, "--", thr).CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, b)
	}
	prof, _ := readProfile(t, out)
	byName := map[string]time.Duration{}
	for _, s := range prof.Sample {
		if names := s.Label["thread"]; len(names) == 1 {
			byName[names[0]] += time.Duration(s.Value[0]) * time.Second / hz
		}
	}
	t.Logf("CPU time by thread name: %v", byName)
	// Measured: rm-a 194-199 ms, rm-a2 992-1000 ms, rm-b2 1.59-1.61 s,
	// rm-b none (the old code: auto, rm-a2 1-34 ms, the rest under rm-a,
	// rm-a's first 200 ms under the program's name in 1 run of 8; fp,
	// rm-a none, all 1.2 s under rm-a2).
	for _, c := range []struct {
		name     string
		min, max time.Duration
	}{
		{"rm-a", 150 * time.Millisecond, 260 * time.Millisecond},
		{"rm-a2", 850 * time.Millisecond, 1150 * time.Millisecond},
		{"rm-b2", 1400 * time.Millisecond, 1800 * time.Millisecond},
		{"rm-b", 0, 30 * time.Millisecond},
		{filepath.Base(thr), 0, 60 * time.Millisecond}, // the main thread's start and join
	} {
		if got := byName[c.name]; got < c.min || got > c.max {
			t.Errorf("thread %s: %v of samples, want %v to %v", c.name, got, c.min, c.max)
		}
	}
}
