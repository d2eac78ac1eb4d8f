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

// evilMapSource maps a copy of its own executable, deletes the copy and
// puts at its path what argv[2] names: a FIFO, a symbolic link to a device
// that reads for ever, or a huge sparse file; then it spins.
const evilMapSource = `
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
	char path[4096], buf[65536];
	snprintf(path, sizeof path, "%s/lib-%s.so", argv[1], argv[2]);
	int in = open("/proc/self/exe", O_RDONLY), out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0700);
	ssize_t n;
	off_t size = 0;
	if (in < 0 || out < 0) { perror("open"); return 1; }
	while ((n = read(in, buf, sizeof buf)) > 0) { if (write(out, buf, n) != n) return 1; size += n; }
	if (mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_PRIVATE, out, 0) == MAP_FAILED) { perror("mmap"); return 1; }
	close(out);
	unlink(path);
	if (!strcmp(argv[2], "fifo")) {
		if (mkfifo(path, 0600) != 0) { perror("mkfifo"); return 1; }
	} else if (!strcmp(argv[2], "device")) {
		if (symlink("/dev/zero", path) != 0) { perror("symlink"); return 1; }
	} else {
		int fd = open(path, O_RDWR | O_CREAT, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)1 << 40) != 0) { perror("sparse"); return 1; }
		close(fd);
	}
	printf("ready\n");
	fflush(stdout);
	for (volatile unsigned long i = 0;; i++) {}
}
`

// startEvilMap builds and starts the program above in a directory of its
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
	src, bin := filepath.Join(dir, "evilmap.c"), filepath.Join(dir, "evilmap")
	if err := os.WriteFile(src, []byte(evilMapSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", append(append([]string{}, testprog.CFlags...), "-o", bin, src)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
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
