package record

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

// syncBuffer is a bytes.Buffer a test may read while Run writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runningCommand is a launched command that runs until release is closed.
// Like ptrace's Target, it reports itself exited once closed.
type runningCommand struct {
	*targettest.Fake
	release chan struct{}
}

func (c *runningCommand) Exited() bool { return c.Closes() > 0 || c.Fake.Exited() }
func (c *runningCommand) Wait() int    { <-c.release; return 5 }

// TestRunSaysItWaitsForTheCommand: when the time is up and the command
// runs on, record writes the profile first, then says that it waits for
// the command to exit (and how to stop it), then forwards its status;
// with -q it says nothing.
func TestRunSaysItWaitsForTheCommand(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "p.folded")
		outputs, err := ParseOutputs([]string{out}, "")
		if err != nil {
			t.Fatal(err)
		}
		cmd := &runningCommand{Fake: fake(10, 0x1111, time.Time{}), release: make(chan struct{})}
		var stderr syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- Run(context.Background(), Config{
				Command: []string{"sleep", "600"}, Hz: 100, Mode: profile.ModeWall, MaxFrames: 64,
				Duration: 200 * time.Millisecond, Outputs: outputs, Stderr: &stderr, Quiet: quiet,
				Launch: func([]string, target.Options) (target.Launched, error) { return cmd, nil },
			})
		}()
		// The note comes waitNoteAfter after the outputs; with -q, wait
		// as long for nothing to come.
		note := "; waiting for the command (PID 10) to exit (Ctrl-C interrupts it, a second Ctrl-C kills it)\n"
		testprog.Poll(20*time.Second, func() bool {
			if strings.Contains(stderr.String(), note) {
				return true
			}
			if _, err := os.Stat(out); quiet && err == nil {
				time.Sleep(2 * waitNoteAfter)
				return true
			}
			return false
		})
		select {
		case code := <-done:
			t.Fatalf("quiet %v: Run returned %d while the command still ran", quiet, code)
		default:
		}
		msg := stderr.String()
		if _, err := os.Stat(out); err != nil {
			t.Errorf("quiet %v: no profile written while the command runs on: %v; stderr:\n%s", quiet, err, msg)
		}
		wrote, waits := strings.Index(msg, "macprof: wrote "+out), strings.Index(msg, "macprof: the profile is written"+note)
		switch {
		case quiet && msg != "":
			t.Errorf("-q: stderr %q, want nothing", msg)
		case !quiet && (wrote < 0 || waits < wrote):
			t.Errorf("stderr:\n%s\nwant the profile written, then %q", msg, "macprof: the profile is written"+note)
		}
		close(cmd.release)
		select {
		case code := <-done:
			if code != 5 {
				t.Errorf("quiet %v: status %d, want the command's 5", quiet, code)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("quiet %v: Run did not return once the command exited", quiet)
		}
	}
}

// TestRunSpansTheLaunch: a launch that takes 500 ms (an attach on a loaded
// machine) while the command runs, which then exits 100 ms later: the
// profile's duration spans the run from the launch, not from the first
// tick after it.
func TestRunSpansTheLaunch(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p.folded")
	outputs, err := ParseOutputs([]string{out}, "")
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	const launchTakes = 500 * time.Millisecond
	start := time.Now()
	code := Run(context.Background(), Config{
		Command: []string{"x"}, Hz: 100, Mode: profile.ModeWall, MaxFrames: 64, Outputs: outputs, Stderr: &stderr,
		Launch: func([]string, target.Options) (target.Launched, error) {
			time.Sleep(launchTakes)
			return fake(10, 0x1111, time.Now().Add(100*time.Millisecond)), nil
		},
	})
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("status %d; stderr:\n%s", code, stderr.String())
	}
	m := regexp.MustCompile(`samples over (\S+) at`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no duration in the summary:\n%s", stderr.String())
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if d < launchTakes || d > took {
		t.Errorf("summary duration %v, want from the launch: at least the launch's %v, at most Run's %v", d, launchTakes, took)
	}
}
