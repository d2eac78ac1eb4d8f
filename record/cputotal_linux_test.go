//go:build linux && (amd64 || arm64)

package record

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/internal/procstat"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/profile"
)

// processCPU returns the CPU time pid's threads used so far, the ended ones
// included, from /proc/PID/stat (utime and stime, in clock ticks of 10 ms).
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	s, err := procstat.Read(pid)
	if err != nil || !s.Has(procstat.FieldSTime) {
		t.Fatalf("%+v, %v", s, err)
	}
	return time.Duration(s.CPUTicks()) * (time.Second / procstat.ClockTicks)
}

// TestRecordCountsThreadsThatNeverUseAPeriod records 1,000 threads that
// each run 50 µs every 100 ms, at 99 Hz (none uses a period of CPU time in
// the recording), with kernel samples and by stopping threads: the
// profile's CPU total is within 15% of the CPU time the target used
// meanwhile, and the summary says what share has no stack.
func TestRecordCountsThreadsThatNeverUseAPeriod(t *testing.T) {
	bin := testprog.BuildC(t, "sparse.c")
	for _, stop := range []bool{false, true} {
		t.Run(fmt.Sprintf("stop=%v", stop), func(t *testing.T) {
			p := testprog.Start(t, bin, "1000", "50", "100")
			// What the target used while the sampler ran (Tune is
			// called just before and undone just after).
			var before, after time.Duration
			out, stderr := runRecord(t, Config{
				PID: p.PID, Hz: 99, Mode: profile.ModeCPU, StopThreads: stop,
				Tune: func() func() {
					before = processCPU(t, p.PID)
					return func() { after = processCPU(t, p.PID) }
				},
			}, exporter.FormatFolded, 4*time.Second)
			used := after - before
			stacks := readFolded(t, out)
			var n, unsampled int64
			for _, s := range stacks {
				n += s.Count
				if s.Frames[len(s.Frames)-1] == profile.UnsampledFrame {
					unsampled += s.Count
				}
			}
			total := time.Duration(n) * (time.Second / 99)
			t.Logf("profile %v (%d samples, %d unsampled), target used %v", total, n, unsampled, used)
			if used < time.Second {
				t.Fatalf("the target used %v of CPU time in the recording: too little to compare with", used)
			}
			// 10% apart at most on a quiet machine; -11% measured at load
			// 25 and 70 (the CPU the target used after the last tick).
			if d := total - used; d < -used*15/100 || d > used*15/100 {
				t.Errorf("profile's CPU total %v, the target used %v: more than 15%% apart", total, used)
			}
			if want := fmt.Sprintf("of CPU time process %d used while recorded (", p.PID); !strings.Contains(stderr, want) {
				t.Errorf("the summary does not give the share of the process's CPU time the profile holds (%q):\n%s", want, stderr)
			}
			if e := stderr; !strings.Contains(e, "could not be attributed to a stack") || !strings.Contains(e, "shown as [unsampled]") {
				t.Errorf("the summary does not give the unsampled share:\n%s", stderr)
			}
		})
	}
}

// TestWriteSummaryUnsampled: the summary gives the share of samples that
// have no stack ([unsampled]), and says nothing of it when there is none.
func TestWriteSummaryUnsampled(t *testing.T) {
	w := &profile.Window{
		Stacks:  []profile.Stack{{PCs: []uint64{1}}, {Unsampled: true}},
		Samples: []profile.Sample{{Stack: 0, Count: 150}, {Stack: 1, Count: 50}},
	}
	var b bytes.Buffer
	WriteSummary(&b, w, time.Second/99)
	want := "macprof: 25.0% of the CPU time (50 samples) could not be attributed to a stack, shown as [unsampled]: threads that ended, or the recording did, before a capture\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nlacks %q", b.String(), want)
	}
	w.Samples = w.Samples[:1]
	b.Reset()
	WriteSummary(&b, w, time.Second/99)
	if strings.Contains(b.String(), "unsampled") {
		t.Errorf("summary without unsampled samples mentions them:\n%s", b.String())
	}
}
