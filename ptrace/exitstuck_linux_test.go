//go:build linux && (amd64 || arm64)

package ptrace_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/ptrace"
	"github.com/macprof/macprof/record"
	"github.com/macprof/macprof/target"
)

// TestRecordOfATargetDyingWithAStuckThread records, as `record --capture
// stop -F 999` does, a command whose second thread is in the
// uninterruptible wait of a vfork parent, attached by a capture that timed
// out, when the process exits. The dead thread is idle, so no capture
// reaches it: the recording must still end, write its profile and forward
// the command's exit status, and the command be reaped.
// MACPROF_STUCK_EXIT_RUNS sets the number of runs (3 by default).
func TestRecordOfATargetDyingWithAStuckThread(t *testing.T) {
	runs := 3
	if s := os.Getenv("MACPROF_STUCK_EXIT_RUNS"); s != "" {
		var err error
		if runs, err = strconv.Atoi(s); err != nil {
			t.Fatalf("MACPROF_STUCK_EXIT_RUNS=%q: %v", s, err)
		}
	}
	bin := testprog.BuildC(t, "exitstuck.c")
	dir := t.TempDir()
	for i := range runs {
		want := 3 + i%100
		out := filepath.Join(dir, fmt.Sprintf("p%d.pprof", i))
		var pid int
		var stderr bytes.Buffer
		cfg := record.Config{
			Command:     []string{bin, strconv.Itoa(want), "1000", "300"},
			Hz:          999,
			Mode:        profile.ModeCPU,
			StopThreads: true,
			Outputs:     []record.Output{{Path: out, Format: exporter.FormatPprof}},
			Quiet:       true,
			Stderr:      &stderr,
			Launch: func(args []string, o target.Options) (target.Launched, error) {
				l, err := ptrace.LaunchWithStuckThread(args, o)
				if l != nil {
					pid = l.PID()
				}
				if err != nil {
					t.Errorf("run %d: %v", i, err)
				}
				return l, nil
			},
			Descendants: func() func(int, []int) []int { return func(_ int, dst []int) []int { return dst[:0] } },
		}
		done := make(chan int, 1)
		start := time.Now()
		go func() { done <- record.Run(context.Background(), cfg) }()
		select {
		case code := <-done:
			if code != want {
				t.Fatalf("run %d: record returned %d, want the command's status %d; stderr:\n%s", i, code, want, stderr.String())
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("run %d: record did not end 20 s after the command's 300 ms run: the dead target is left unreaped", i)
		}
		took := time.Since(start)
		if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
			t.Fatalf("run %d: no profile written: %v", i, err)
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			t.Fatalf("run %d: PID %d still exists after record returned", i, pid)
		}
		t.Logf("run %d: status %d in %v", i, want, took)
	}
}

// TestRecordOfACommandThatExitsAtOnce records commands that end before (or
// while) they are attached, 40 times each: each gives its own exit status
// and a profile, never "target process exited".
func TestRecordOfACommandThatExitsAtOnce(t *testing.T) {
	dir := t.TempDir()
	for i := range 40 {
		want, cmd := 0, []string{"true"}
		if i%2 == 1 {
			want, cmd = 7, []string{"sh", "-c", "exit 7"}
		}
		out := filepath.Join(dir, fmt.Sprintf("p%d.pprof", i))
		var stderr bytes.Buffer
		code := record.Run(context.Background(), record.Config{
			Command: cmd,
			Hz:      99,
			Mode:    profile.ModeCPU,
			Outputs: []record.Output{{Path: out, Format: exporter.FormatPprof}},
			Quiet:   true,
			Stderr:  &stderr,
			Launch: func(args []string, o target.Options) (target.Launched, error) {
				return ptrace.Launch(args, o)
			},
			// As the CLI: the run ends at the exit, not at the next drain.
			WatchExit: ptrace.WatchExit,
		})
		if code != want {
			t.Fatalf("run %d (%v): status %d, want %d; stderr:\n%s", i, cmd, code, want, stderr.String())
		}
		if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
			t.Fatalf("run %d (%v): no profile written: %v; stderr:\n%s", i, cmd, err, stderr.String())
		}
	}
}
