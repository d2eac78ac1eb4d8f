package record

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/sampler"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

// fake is a process of one thread, always in the stack pc, 0x5000, that
// exits at exitAt when it is set.
func fake(pid int, pc uint64, exitAt time.Time) *targettest.Fake {
	f := targettest.OneThread(pid, pc, 0x5000)
	f.Stopped = 20 * time.Microsecond
	f.ExitAt = exitAt
	return f
}

func TestWriteSummary(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := &profile.Window{
		Start: start, End: start.Add(2*time.Second + 345678*time.Microsecond),
		Stacks:  make([]profile.Stack, 3),
		Samples: []profile.Sample{{Count: 100}, {Count: 95}, {Count: 2}},
		Missed:  map[profile.MissReason]int64{profile.MissStopTimeout: 4},
		Stats: profile.Stats{Captures: 190, StoppedP50: 41400 * time.Nanosecond, StoppedP99: 120600 * time.Nanosecond,
			StoppedMax: 2 * time.Millisecond, ProfilerCPU: 31400 * time.Microsecond},
	}
	var b bytes.Buffer
	WriteSummary(&b, w, time.Second/99)
	want := `macprof: 197 samples over 2.346s at 99 Hz, 3 stacks, 190 captures
macprof: threads stopped per capture: p50 41µs, p99 121µs, max 2ms; profiler CPU 31ms
macprof: missed 4: ` + profile.MissStopTimeout.String() + "\n"
	if b.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestParseOutputs(t *testing.T) {
	dir := t.TempDir()
	outs, err := ParseOutputs([]string{filepath.Join(dir, "a.pb.gz"), filepath.Join(dir, "b.svg")}, "")
	if err != nil || len(outs) != 2 || outs[0].Format != exporter.FormatPprof || outs[1].Format != exporter.FormatSVG {
		t.Errorf("by extension: %+v, %v", outs, err)
	}
	if outs, err := ParseOutputs([]string{filepath.Join(dir, "a.out")}, "folded"); err != nil || outs[0].Format != exporter.FormatFolded {
		t.Errorf("--format folded: %+v, %v", outs, err)
	}
	if _, err := ParseOutputs([]string{filepath.Join(dir, "a.out")}, ""); err == nil {
		t.Error("an unknown extension was taken")
	}
	bad := "/nonexistent-dir/x.pb.gz"
	if _, err := ParseOutputs([]string{bad}, ""); err == nil || !strings.HasPrefix(err.Error(), "cannot write "+bad+": ") {
		t.Errorf("unwritable output: %v", err)
	}
}

// TestFollowChildren follows a launched command's descendants from a fake
// process tree: each new one is attached once, one that cannot be is not
// tried again, the tree is read at most every childPollInterval, and not at
// all once the command exited.
func TestFollowChildren(t *testing.T) {
	s, err := sampler.New(sampler.Config{Hz: 99})
	if err != nil {
		t.Fatal(err)
	}
	root := fake(10, 0, time.Time{})
	tree := []int{11, 12}
	looks := 0
	var tried []int
	r := &recording{s: s, attachFn: func(pid int, o target.Options) (target.Target, error) {
		tried = append(tried, pid)
		if pid == 12 {
			return nil, errors.New("a zombie")
		}
		return fake(pid, 0, time.Time{}), nil
	}}
	r.descendants = func(p int, dst []int) []int {
		looks++
		if p != 10 {
			t.Errorf("descendants of %d, want of the root 10", p)
		}
		return append(dst[:0], tree...)
	}
	r.add(root, true)
	r.root = root

	r.followChildren(childPollInterval)
	tree = append(tree, 13)
	r.followChildren(childPollInterval + childPollInterval/2) // too soon: not looked
	r.followChildren(2*childPollInterval - childPollInterval/20)
	if looks != 2 {
		t.Errorf("the tree was read %d times, want 2", looks)
	}
	if want := []int{11, 12, 13}; !slices.Equal(tried, want) {
		t.Errorf("attached %v, want %v (12 only once)", tried, want)
	}
	for _, pid := range []int{10, 11, 13} {
		if !r.attached(pid) {
			t.Errorf("pid %d not recorded", pid)
		}
	}
	if r.attached(12) {
		t.Error("the child that could not be attached is listed")
	}
	root.Exit()
	r.followChildren(time.Second)
	r.followChildren(2 * time.Second)
	if looks != 2 || r.root != nil {
		t.Errorf("the tree was read after the command exited (%d reads)", looks)
	}
}

// TestRunLaunched records a launched command that starts a child and exits
// with status 7: both are recorded and closed, the summary and outputs are
// written, and the status is forwarded; Prepare comes before the launch,
// Tune after it, and both are undone once sampling ended, before the
// outputs are written.
func TestRunLaunched(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p.folded")
	outputs, err := ParseOutputs([]string{out}, "")
	if err != nil {
		t.Fatal(err)
	}
	exit := time.Now().Add(400 * time.Millisecond)
	root := fake(10, 0x1111, exit)
	root.Status = 7
	child := fake(11, 0x2222, exit)
	var launched []string
	var steps []string
	var stderr bytes.Buffer
	code := Run(context.Background(), Config{
		Command: []string{"sh", "-c", "x"}, Hz: 100, Mode: profile.ModeWall, MaxFrames: 64,
		Outputs: outputs, Stderr: &stderr,
		Prepare: func() func() {
			steps = append(steps, "prepare")
			return func() { steps = append(steps, "unprepare") }
		},
		Tune: func() func() {
			steps = append(steps, "tune")
			return func() { steps = append(steps, "untune") }
		},
		Launch: func(args []string, o target.Options) (target.Launched, error) {
			steps = append(steps, "launch")
			launched = args
			if !o.Continuous || o.Kernel.Period != 0 || o.MaxFrames != 64 {
				t.Errorf("launch options %+v", o)
			}
			return root, nil
		},
		Attach: func(pid int, o target.Options) (target.Target, error) {
			if pid != 11 {
				t.Errorf("attach %d", pid)
			}
			return child, nil
		},
		Descendants: func() func(int, []int) []int {
			return func(_ int, dst []int) []int { return append(dst[:0], 11) }
		},
	})
	if code != 7 {
		t.Errorf("exit status %d, want the command's 7", code)
	}
	if len(launched) != 3 || root.Closes() == 0 || child.Closes() == 0 {
		t.Errorf("launched %q; closed: command %v, child %v", launched, root.Closes() > 0, child.Closes() > 0)
	}
	if want := []string{"prepare", "launch", "tune", "untune", "unprepare"}; !slices.Equal(steps, want) {
		t.Errorf("steps %q, want %q", steps, want)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, pc := range []string{"0x1111", "0x2222"} {
		if !bytes.Contains(b, []byte(pc)) {
			t.Errorf("profile lacks %s:\n%s", pc, b)
		}
	}
	msg := stderr.String()
	for _, want := range []string{"macprof: ", " samples over ", " at 100 Hz, ", "threads stopped per capture", "macprof: wrote " + out + " (folded)\n"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
}

// TestRunStatus checks the statuses that are not the command's: 1 for a
// target that cannot be attached or an output that cannot be written, 0
// with nothing said when quiet.
func TestRunStatus(t *testing.T) {
	dir := t.TempDir()
	attachFails := func(int, target.Options) (target.Target, error) { return nil, errors.New("no such process") }
	var stderr bytes.Buffer
	if code := Run(context.Background(), Config{PID: 5, Hz: 99, Stderr: &stderr, Attach: attachFails}); code != 1 ||
		stderr.String() != "macprof record: no such process\n" {
		t.Errorf("attach failure: status %d, stderr %q", code, stderr.String())
	}

	attach := func(pid int, o target.Options) (target.Target, error) {
		if o.Kernel.Period != time.Second/50 {
			t.Errorf("cpu mode asks for no kernel samples: %+v", o)
		}
		return fake(pid, 0, time.Now().Add(50*time.Millisecond)), nil
	}
	good := Output{Path: filepath.Join(dir, "ok.folded"), Format: exporter.FormatFolded}
	bad := Output{Path: filepath.Join(dir, "missing", "x.folded"), Format: exporter.FormatFolded}
	stderr.Reset()
	if code := Run(context.Background(), Config{PID: 5, Hz: 50, Outputs: []Output{bad, good}, Quiet: true, Stderr: &stderr, Attach: attach}); code != 1 ||
		!strings.HasPrefix(stderr.String(), "macprof record: write "+bad.Path+": ") || strings.Contains(stderr.String(), "macprof: ") {
		t.Errorf("write failure: status %d, stderr %q", code, stderr.String())
	}
	if _, err := os.Stat(good.Path); err != nil {
		t.Errorf("the other output was not written: %v", err)
	}
	stderr.Reset()
	if code := Run(context.Background(), Config{PID: 5, Hz: 50, Outputs: []Output{good}, Quiet: true, Stderr: &stderr, Attach: attach}); code != 0 || stderr.Len() != 0 {
		t.Errorf("quiet run: status %d, stderr %q", code, stderr.String())
	}
}
