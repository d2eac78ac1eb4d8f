//go:build linux && (amd64 || arm64)

package record

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/exporter/folded"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/ptrace"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// recordLaunched records cmd, launched by the Linux backend as the CLI
// does, at hz with unwind method m, and returns the folded stacks and the
// summary.
func recordLaunched(t *testing.T, hz int, m unwind.Method, cmd ...string) ([]folded.Stack, string) {
	t.Helper()
	out, summary := runRecord(t, Config{Command: cmd, Hz: hz, Mode: profile.ModeCPU, MaxFrames: 128, Unwind: m}, exporter.FormatFolded, 60*time.Second)
	return readFolded(t, out), summary
}

// runRecord runs record with cfg on the Linux backend, as cmd/macprof
// does, for at most limit, writing one output in format; it returns the
// output's path and what record printed, and fails the test on a non-zero
// exit status.
func runRecord(t *testing.T, cfg Config, format exporter.Format, limit time.Duration) (string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "p."+format.String())
	var stderr bytes.Buffer
	cfg.Outputs, cfg.Stderr = []Output{{Path: out, Format: format}}, &stderr
	if cfg.Attach == nil {
		cfg.Attach = func(pid int, o target.Options) (target.Target, error) { return ptrace.Attach(pid, o) }
	}
	if len(cfg.Command) > 0 {
		cfg.Launch = func(args []string, o target.Options) (target.Launched, error) { return ptrace.Launch(args, o) }
		cfg.Descendants = func() func(int, []int) []int { return new(ptrace.ProcessTree).Descendants }
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if code := Run(ctx, cfg); code != 0 {
		t.Fatalf("record %s (pid %d): status %d\n%s", strings.Join(cfg.Command, " "), cfg.PID, code, stderr.String())
	}
	return out, stderr.String()
}

// readFolded parses the folded profile at path.
func readFolded(t *testing.T, path string) []folded.Stack {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stacks, err := folded.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return stacks
}

// TestRecordCommandThatExecs: a static Go program that burns CPU and then
// execs another static Go program is profiled with each program's own
// names: both leaf functions are found, each only on its own program's
// stacks, and no frame is named from the other program's table (which
// gave runtime.badmcall), whichever way stacks are walked.
func TestRecordCommandThatExecs(t *testing.T) {
	launcher := testprog.BuildGo(t, "goexec")
	busy := testprog.BuildGo(t, "gobusy")
	for _, m := range []unwind.Method{unwind.MethodAuto, unwind.MethodCFI} {
		t.Run(m.String(), func(t *testing.T) {
			stacks, summary := recordLaunched(t, 999, m, launcher, "0.6", busy, "2", "0.6")
			var before, after int64
			for _, s := range stacks {
				leaf := s.Frames[len(s.Frames)-1]
				switch {
				case slices.Contains(s.Frames, "runtime.badmcall"):
					t.Errorf("a frame named from the other program's table: %s", strings.Join(s.Frames, ";"))
				case leaf == "main.execLauncherSpin":
					before += s.Count
				case leaf == "main.execTargetSpin":
					after += s.Count
				}
				if slices.Contains(s.Frames, "main.execLauncherSpin") && slices.Contains(s.Frames, "main.execTargetSpin") {
					t.Errorf("one stack with both programs' functions: %s", strings.Join(s.Frames, ";"))
				}
			}
			t.Logf("samples in the launcher's spin %d, in the exec'd program's %d\n%s", before, after, summary)
			if before == 0 || after == 0 {
				t.Errorf("samples in main.execLauncherSpin %d, in main.execTargetSpin %d: want both", before, after)
			}
		})
	}
}
