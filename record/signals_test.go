package record

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/target/targettest"
)

// signalWait bounds how long Run may take to act on a signal; it acts at
// once, and a Run that does not act waits for a command that lives far
// longer.
const signalWait = 10 * time.Second

// process is a real process under a fake target, so that the signal Run
// passes on can be seen: Wait waits for it, after checking that every
// target was closed before it got the signal.
type process struct {
	*targettest.Fake
	cmd      *exec.Cmd
	waited   chan struct{}
	closedBy bool // the target was closed when the process ended
}

func startProcess(t *testing.T, args ...string) *process {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{Fake: fake(cmd.Process.Pid, 0x1111, time.Time{}), cmd: cmd, waited: make(chan struct{})}
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-p.waited:
		case <-time.After(signalWait):
			t.Error("the process was not waited for")
		}
	})
	return p
}

func (p *process) Wait() int {
	defer close(p.waited)
	p.cmd.Wait()
	p.closedBy = p.Closes() > 0
	return target.ExitCode(p.cmd.ProcessState.Sys().(syscall.WaitStatus))
}

// Signal reaches the real process.
func (p *process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// runAsync runs Run in the background and returns its status channel.
func runAsync(cfg Config) <-chan int {
	done := make(chan int, 1)
	go func() { done <- Run(context.Background(), cfg) }()
	return done
}

func waitStatus(t *testing.T, done <-chan int, what string) int {
	t.Helper()
	start := time.Now()
	select {
	case code := <-done:
		t.Logf("%s: Run returned after %v", what, time.Since(start))
		return code
	case <-time.After(signalWait):
		t.Fatalf("%s: Run has not returned after %v", what, signalWait)
	}
	return 0
}

func launchConfig(t *testing.T, p *process, sigs chan os.Signal, stderr *bytes.Buffer) (Config, string) {
	out := filepath.Join(t.TempDir(), "p.folded")
	outputs, err := ParseOutputs([]string{out}, "")
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		Command: []string{"cmd"}, Hz: 100, Mode: profile.ModeWall, MaxFrames: 64, Outputs: outputs, Stderr: stderr, Signals: sigs,
		Launch:      func([]string, target.Options) (target.Launched, error) { return p, nil },
		Descendants: func() func(int, []int) []int { return nil },
	}, out
}

// TestRunPassesSignal: the first signal stops the recording, reaches the
// command once its target is closed, and Run returns the command's status.
func TestRunPassesSignal(t *testing.T) {
	p := startProcess(t, "sleep", "60")
	sigs := make(chan os.Signal, 2)
	var stderr bytes.Buffer
	cfg, out := launchConfig(t, p, sigs, &stderr)
	done := runAsync(cfg)
	time.Sleep(200 * time.Millisecond)
	sigs <- syscall.SIGTERM
	if code := waitStatus(t, done, "SIGTERM"); code != 128+int(syscall.SIGTERM) {
		t.Errorf("status %d, want the command's %d:\n%s", code, 128+int(syscall.SIGTERM), stderr.String())
	}
	if !p.closedBy {
		t.Error("the command got the signal before its target was closed")
	}
	if b, err := os.ReadFile(out); err != nil || !bytes.Contains(b, []byte("0x1111")) {
		t.Errorf("profile %q, %v", b, err)
	}
	if !strings.HasPrefix(stderr.String(), "macprof record: terminated: stopping; a second signal exits at once\n") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// TestRunSecondSignal: a command that ignores the first signal is waited
// for, after the profile is written; a second signal kills it and Run
// returns 128 plus the signal's number at once.
func TestRunSecondSignal(t *testing.T) {
	p := startProcess(t, "sh", "-c", `trap "" TERM; exec sleep 60`)
	sigs := make(chan os.Signal, 2)
	var stderr bytes.Buffer
	cfg, out := launchConfig(t, p, sigs, &stderr)
	cfg.Quiet = true
	done := runAsync(cfg)
	time.Sleep(200 * time.Millisecond)
	sigs <- syscall.SIGTERM
	if !testprog.Poll(signalWait, func() bool {
		b, _ := os.ReadFile(out)
		return len(b) > 0
	}) {
		t.Fatal("no profile after the first signal")
	}
	select {
	case code := <-done:
		t.Fatalf("Run returned %d while the command runs on", code)
	case <-time.After(100 * time.Millisecond):
	}
	sigs <- syscall.SIGTERM
	if code := waitStatus(t, done, "second SIGTERM"); code != 128+int(syscall.SIGTERM) {
		t.Errorf("status %d, want %d", code, 128+int(syscall.SIGTERM))
	}
	select {
	case <-p.waited:
	case <-time.After(signalWait):
		t.Fatal("the command was not killed")
	}
	if ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGKILL {
		t.Errorf("the command ended with %v, want killed", ws)
	}
	want := "macprof record: terminated again: killed the command (PID " + strconv.Itoa(p.PID()) + ") and exiting\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// stuckTarget is a process whose captures never end until it is closed,
// as a sampler blocked on the target would be.
type stuckTarget struct {
	*targettest.Fake
	release chan struct{}
}

func (s *stuckTarget) Capture(target.ThreadID, *target.Capture) error {
	<-s.release
	return target.ErrClosed
}

func (s *stuckTarget) Close() error {
	if s.Closes() == 0 {
		close(s.release)
	}
	return s.Fake.Close()
}

// TestRunSecondSignalWhileStuck: with the recording stuck in a capture, the
// first signal cannot end it; the second closes the target and returns.
func TestRunSecondSignalWhileStuck(t *testing.T) {
	st := &stuckTarget{Fake: fake(5, 0, time.Time{}), release: make(chan struct{})}
	sigs := make(chan os.Signal, 2)
	var stderr bytes.Buffer
	done := runAsync(Config{PID: 5, Hz: 100, Mode: profile.ModeWall, MaxFrames: 64, Quiet: true, Stderr: &stderr, Signals: sigs,
		Attach: func(int, target.Options) (target.Target, error) { return st, nil }})
	time.Sleep(200 * time.Millisecond)
	sigs <- os.Interrupt
	select {
	case code := <-done:
		t.Fatalf("Run returned %d from a stuck capture", code)
	case <-time.After(100 * time.Millisecond):
	}
	sigs <- os.Interrupt
	if code := waitStatus(t, done, "second interrupt"); code != 128+int(syscall.SIGINT) {
		t.Errorf("status %d, want %d", code, 128+int(syscall.SIGINT))
	}
	if st.Closes() == 0 {
		t.Error("the target was left open")
	}
	if got := stderr.String(); got != "macprof record: interrupt again: exiting\n" {
		t.Errorf("stderr %q", got)
	}
}
