//go:build linux && (amd64 || arm64)

package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/internal/safefile/safefiletest"
	"github.com/macprof/macprof/internal/testprog"
)

// startEvilMap builds and starts testprog/src/evilmap.c in a directory of its
// own, as the unprivileged user nobody, and returns its PID.
func startEvilMap(t *testing.T, kind string) int {
	t.Helper()
	dir := t.TempDir()
	// The program runs as nobody: it must reach and write its directory.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	// nobody cannot reach BuildC's directory (mode 0700): it runs a copy.
	exe, err := os.ReadFile(testprog.BuildC(t, "evilmap.c"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "evilmap")
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, dir, kind)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("evilmap %s: %q, %v", kind, line, err)
	}
	go io.Copy(io.Discard, stdout)
	return cmd.Process.Pid
}

// runBounded runs macprof with args, killing it after limit, and returns
// how long it ran, its output and its exit error.
func runBounded(t *testing.T, limit time.Duration, args ...string) (time.Duration, string, error) {
	t.Helper()
	macprof, _ := macprofBinary(t)
	cmd := exec.Command(macprof, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(limit, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	return time.Since(start), out.String(), err
}

// TestHostileMappedPath: a target run by another user that replaced a file
// it mapped by a FIFO, a device or a huge sparse file cannot hold up record
// or snapshot (issue 17, defect 2). A FIFO held them until killed; the
// bounds are far above what a loaded 2-CPU machine takes (record -d 2s
// 3.3 s, snapshot 0.6 s at load 36) and far below that.
func TestHostileMappedPath(t *testing.T) {
	for _, kind := range []string{"fifo", "device", "sparse"} {
		t.Run(kind, func(t *testing.T) {
			pid := startEvilMap(t, kind)
			out := filepath.Join(t.TempDir(), "p.pb.gz")
			took, log, err := runBounded(t, 20*time.Second, "record", "-p", strconv.Itoa(pid), "-d", "2s", "-o", out)
			if err != nil || took > 10*time.Second {
				t.Errorf("record -d 2s: %v after %v (want under 10 s)\n%s", err, took, log)
			}
			if st, err := os.Stat(out); err != nil || st.Size() == 0 {
				t.Errorf("record wrote no profile: %v", err)
			}
			t.Logf("record -d 2s took %v", took)
			took, log, err = runBounded(t, 20*time.Second, "snapshot", "-p", strconv.Itoa(pid))
			if err != nil || took > 8*time.Second {
				t.Errorf("snapshot: %v after %v (want under 8 s)\n%s", err, took, log)
			}
			t.Logf("snapshot took %v", took)
		})
	}
}

// TestAgentHostileMappedPath: an agent told to profile such a target and
// a good one keeps exporting (issue 17, defect 2).
func TestAgentHostileMappedPath(t *testing.T) {
	good := testprog.Start(t, testprog.BuildC(t, "deep.c"), "1", "4")
	evil := startEvilMap(t, "fifo")
	// Count the windows that hold the good target's stacks (its threads
	// spin in spin()).
	var ingests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, _, err := r.FormFile("profile")
		if err != nil {
			return
		}
		p, err := pprof.Parse(f)
		if err != nil {
			return
		}
		for _, f := range p.Function {
			if f.Name == "spin" {
				ingests.Add(1)
				return
			}
		}
	}))
	defer srv.Close()
	took, log, err := runBounded(t, 30*time.Second, "agent", "--pid", strconv.Itoa(good.PID), "--pid", strconv.Itoa(evil),
		"--window", "1s", "-d", "4s", "--pyroscope-url", srv.URL, "--pyroscope-app", "t", "--telemetry", "none")
	if err != nil || ingests.Load() < 3 {
		t.Errorf("agent: %v after %v, %d windows with the good target exported (want 3 or more)\n%s", err, took, ingests.Load(), log)
	}
	t.Logf("agent exported %d windows with the good target in %v", ingests.Load(), took)
}

// TestRecordOutputFIFO: record -o naming a FIFO that no process reads ends
// after its duration with an error, not hanging (issue 17, defect 8).
func TestRecordOutputFIFO(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "deep.c"), "1", "4")
	fifo := safefiletest.FIFO(t, "out.folded")
	took, log, err := runBounded(t, 20*time.Second, "record", "-p", strconv.Itoa(p.PID), "-d", "1s", "-o", fifo)
	if err == nil || took > 10*time.Second || !strings.Contains(log, "no process reads") {
		t.Errorf("record -o FIFO: %v after %v; want exit 1 with an error saying no process reads it\n%s", err, took, log)
	}
	t.Logf("record -d 1s -o FIFO took %v", took)
}
