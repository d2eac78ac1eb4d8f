package record

import (
	"bytes"
	"testing"
	"time"

	"github.com/macprof/macprof/profile"
)

// TestWallSummarySaysWhatAWallProfileHolds: a wall profile's samples are
// its threads' time, running or waiting, not CPU time: the summary says
// threads x duration and compares nothing with the command's CPU time.
func TestWallSummarySaysWhatAWallProfileHolds(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := &profile.Window{
		Start: start, End: start.Add(2 * time.Second), Mode: profile.ModeWall,
		Stacks: make([]profile.Stack, 2),
		// 4 threads of 2 processes, 200 ticks each at 100 Hz.
		Samples: []profile.Sample{
			{PID: 1, Thread: 11, Count: 150}, {PID: 1, Stack: 1, Thread: 11, Count: 50},
			{PID: 1, Thread: 12, Count: 200}, {PID: 2, Thread: 11, Count: 200}, {PID: 2, Thread: 13, Count: 200},
		},
	}
	var b bytes.Buffer
	writeTreeShare(&b, w, 10*time.Millisecond, 2017*time.Millisecond)
	want := "macprof: the wall profile holds 8s of thread time, running or waiting, of 4 thread(s) over 2s (4.0 threads at a time on average): wall time, not CPU time\n"
	if b.String() != want {
		t.Errorf("wall summary:\n%s\nwant:\n%s", b.String(), want)
	}
	// With what was due known, it says what share it holds, and when
	// most of the threads' time is missing, says so.
	w.Stats.WallDue = 800
	b.Reset()
	writeTreeShare(&b, w, 10*time.Millisecond, 2017*time.Millisecond)
	want = "macprof: the wall profile holds 8s of thread time, running or waiting, of 4 thread(s) over 2s (4.0 threads at a time on average), 100.0% of the 8s due (each thread listed, at each tick): wall time, not CPU time\n"
	if b.String() != want {
		t.Errorf("wall summary, all due held:\n%s\nwant:\n%s", b.String(), want)
	}
	w.Stats.WallDue = 80000
	b.Reset()
	writeTreeShare(&b, w, 10*time.Millisecond, 2017*time.Millisecond)
	want = "macprof: the wall profile holds 8s of thread time, running or waiting, of 4 thread(s) over 2s (4.0 threads at a time on average), 1.0% of the 13m20s due (each thread listed, at each tick): wall time, not CPU time\n" +
		"macprof: so 99.0% of the threads' time is missing from it (the missed counts say why): at a lower -F each tick has longer to capture the threads\n"
	if b.String() != want {
		t.Errorf("wall summary, most due missing:\n%s\nwant:\n%s", b.String(), want)
	}
	w.Stats.WallDue = 0

	// A CPU profile still compares its samples with the CPU time used.
	w.Mode = profile.ModeCPU
	b.Reset()
	writeTreeShare(&b, w, 10*time.Millisecond, 8*time.Second)
	if want := "macprof: the profile holds 8s of the 8s of CPU time the command and the children it waited for used (100.0%, rusage), in 2 processes\n"; b.String() != want {
		t.Errorf("cpu summary:\n%s\nwant:\n%s", b.String(), want)
	}
	// A run shorter than a period holds no samples, and says why.
	w.Samples = nil
	b.Reset()
	writeTreeShare(&b, w, 10*time.Millisecond, 1200*time.Microsecond)
	if want := "macprof: the profile holds no samples: the command and the children it waited for used 1.2ms of CPU time (rusage), less than one sampling period (10ms): record at a higher -F to sample so short a run\n"; b.String() != want {
		t.Errorf("summary of a profile without samples:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	writeProcessShare(&b, w, 10*time.Millisecond, 42, 30*time.Millisecond)
	if want := "macprof: the profile holds no samples: process 42 used 30ms of CPU time while recorded (by the kernel's count)\n"; b.String() != want {
		t.Errorf("-p summary of a profile without samples:\n%s\nwant:\n%s", b.String(), want)
	}
}
