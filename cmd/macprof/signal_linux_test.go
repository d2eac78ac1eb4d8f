//go:build linux && (amd64 || arm64)

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pprof "github.com/google/pprof/profile"
	"github.com/macprof/macprof/internal/procstat"
	"github.com/macprof/macprof/internal/testprog"
)

// signalWait bounds how long macprof may take to act on a signal: to
// write the profile after the first, to exit after the command did or after
// the second. It is far above what it takes on a loaded machine (the test
// logs it) and far below the command's own life, which it would otherwise
// wait for.
const signalWait = 15 * time.Second

// recordCommand starts macprof record on a shell script that writes its PID
// to a file and spins, and returns macprof, the script's PID once it runs,
// and the profile's path.
func recordCommand(t *testing.T, capture, script string) (*exec.Cmd, *bytes.Buffer, int, string) {
	t.Helper()
	macprof, _ := macprofBinary(t)
	dir := t.TempDir()
	out, pidFile := filepath.Join(dir, "p.pb.gz"), filepath.Join(dir, "pid")
	cmd := exec.Command(macprof, "record", "--capture", capture, "-o", out, "--", "sh", "-c", "echo $$ >"+pidFile+"; "+script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// The command holds macprof's stderr too: once macprof is gone, Wait
	// need not wait for the command to close it.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var pid int
	if !testprog.Poll(signalWait, func() bool {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid != 0
	}) {
		t.Fatalf("the command did not start:\n%s", stderr.String())
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	// Let it be sampled for a while.
	time.Sleep(time.Second)
	return cmd, &stderr, pid, out
}

// waitExit waits for macprof to exit and returns its status and how long
// it took, failing the test after signalWait.
func waitExit(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), time.Since(start)
	case <-time.After(signalWait):
		cmd.Process.Kill()
		<-done
		t.Fatalf("macprof still running %v after the signal:\n%s", signalWait, stderr.String())
	}
	return 0, 0
}

// profileWritten reports whether path holds a whole pprof profile (with or
// without samples: under load a short run may have none).
func profileWritten(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = pprof.Parse(f)
	return err == nil
}

// gone reports whether a process has exited (and perhaps been reaped).
func gone(pid int) bool {
	s, err := procstat.Read(pid)
	return err != nil || s.State == 'Z'
}

// TestRecordSIGTERMReachesCommand sends SIGTERM to record -- CMD, whose
// command traps it and exits with status 7: the command gets the signal,
// the profile is written, and macprof exits with the command's status.
func TestRecordSIGTERMReachesCommand(t *testing.T) {
	for _, capture := range []string{"auto", "stop"} {
		t.Run(capture, func(t *testing.T) {
			cmd, stderr, pid, out := recordCommand(t, capture, `trap "exit 7" TERM; while :; do :; done`)
			cmd.Process.Signal(syscall.SIGTERM)
			code, took := waitExit(t, cmd, stderr)
			t.Logf("exited %v after SIGTERM", took)
			if code != 7 {
				t.Errorf("status %d, want the command's 7:\n%s", code, stderr.String())
			}
			if !gone(pid) {
				t.Errorf("the command (PID %d) still runs", pid)
			}
			if !profileWritten(out) {
				t.Errorf("no profile:\n%s", stderr.String())
			}
		})
	}
}

// TestRecordSecondSignalExitsAtOnce sends SIGTERM to record -- CMD, whose
// command ignores it: the profile is written and macprof waits for the
// command; a second SIGTERM makes it kill the command and exit at once,
// with 128+SIGTERM, leaving no thread of it stopped.
func TestRecordSecondSignalExitsAtOnce(t *testing.T) {
	for _, capture := range []string{"auto", "stop"} {
		t.Run(capture, func(t *testing.T) {
			cmd, stderr, pid, out := recordCommand(t, capture, `trap "" TERM; while :; do :; done`)
			cmd.Process.Signal(syscall.SIGTERM)
			start := time.Now()
			if !testprog.Poll(signalWait, func() bool { return profileWritten(out) }) {
				t.Fatalf("no profile %v after the first SIGTERM:\n%s", signalWait, stderr.String())
			}
			t.Logf("profile written %v after the first SIGTERM", time.Since(start))
			// The command ignored it and runs on, untraced.
			st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if err != nil || !bytes.Contains(st, []byte("TracerPid:\t0\n")) || !bytes.Contains(st, []byte("State:\tR")) && !bytes.Contains(st, []byte("State:\tS")) {
				t.Errorf("the command after the first SIGTERM (%v):\n%s", err, st)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			code, took := waitExit(t, cmd, stderr)
			t.Logf("exited %v after the second SIGTERM", took)
			if code != 128+int(syscall.SIGTERM) {
				t.Errorf("status %d, want %d:\n%s", code, 128+int(syscall.SIGTERM), stderr.String())
			}
			testprog.WaitFor(t, signalWait, func() bool { return gone(pid) },
				fmt.Sprintf("the command (PID %d) to end", pid))
			if want := fmt.Sprintf("macprof record: terminated again: killed the command (PID %d) and exiting\n", pid); !strings.HasSuffix(stderr.String(), want) {
				t.Errorf("stderr does not end with %q:\n%s", want, stderr.String())
			}
		})
	}
}

// TestRecordKilledTakesCommandAlong SIGKILLs record -- CMD, which cannot
// forward anything: the kernel's parent-death signal ends the command too,
// rather than leaving it running unprofiled and unowned.
func TestRecordKilledTakesCommandAlong(t *testing.T) {
	for _, capture := range []string{"auto", "stop"} {
		t.Run(capture, func(t *testing.T) {
			cmd, stderr, pid, _ := recordCommand(t, capture, `trap "" TERM INT HUP; while :; do :; done`)
			cmd.Process.Kill()
			waitExit(t, cmd, stderr)
			start := time.Now()
			testprog.WaitFor(t, signalWait, func() bool { return gone(pid) },
				fmt.Sprintf("the command (PID %d) to end after macprof was killed", pid))
			t.Logf("the command ended %v after macprof", time.Since(start))
		})
	}
}
