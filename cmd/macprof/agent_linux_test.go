//go:build linux && (amd64 || arm64)

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/collectortest"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/profile"
)

// startAgent runs macprof agent with args and returns its process and a
// function that waits for it and returns its log.
func startAgent(t *testing.T, args ...string) (*exec.Cmd, func() string) {
	t.Helper()
	macprof, _ := macprofBinary(t)
	cmd := exec.Command(macprof, append([]string{"agent"}, args...)...)
	var log safeBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, func() string {
		if err := cmd.Wait(); err != nil {
			t.Errorf("agent: %v\n%s", err, log.String())
		}
		return log.String()
	}
}

type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// windowsReceived adds the distinct profiles (one per window and process)
// in the collector's current output file to seen. The file exporter starts a
// new file when the collector restarts, so callers read it before a stop and
// again at the end.
func windowsReceived(t *testing.T, col *collectortest.Collector, seen map[uint64]bool) map[uint64]bool {
	t.Helper()
	pds, err := col.Profiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, pd := range pds {
		for _, rp := range pd.GetResourceProfiles() {
			for _, sp := range rp.GetScopeProfiles() {
				for _, p := range sp.GetProfiles() {
					seen[p.GetTimeUnixNano()] = true
				}
			}
		}
	}
	return seen
}

func TestAgentExportsToCollector(t *testing.T) {
	col := collectortest.Start(t)
	_, demo := macprofBinary(t)
	p := testprog.Start(t, demo, "-threads", "2", "-duration", "0")
	_, wait := startAgent(t, "--name", onlyThis(demo), "--rescan", "500ms", "--otlp-endpoint", "http://"+col.HTTPAddr,
		"--window", "2s", "-F", "49", "-d", "7s", "--telemetry", "none", "--service-name", "demo-service")
	log := wait()
	samples, ok := col.WaitSamples(20*time.Second, func(s []collectortest.Sample) bool {
		for _, x := range s {
			for _, f := range x.Frames {
				if f == "main.computeChecksums" {
					return true
				}
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("the collector never received the workload's frames (%d samples)\nagent log:\n%s\ncollector log:\n%s", len(samples), log, col.Log())
	}
	funcs := map[string]bool{}
	for _, s := range samples {
		for _, f := range s.Frames {
			funcs[f] = true
		}
		if s.Resource["process.pid"] != strconv.Itoa(p.PID) {
			t.Fatalf("sample of process.pid %q, want %d", s.Resource["process.pid"], p.PID)
		}
		// Only the CPU time of threads no listing saw, [unsampled], has
		// no thread.
		if unsampled := len(s.Frames) == 1 && s.Frames[0] == profile.UnsampledFrame; len(s.Attrs) == 0 && !unsampled {
			t.Fatalf("sample of frames %v has no thread attributes", s.Frames)
		} else if len(s.Attrs) != 0 && (s.Attrs["thread.name"] != "demo" || s.Attrs["thread.id"] == "") {
			t.Fatalf("sample attributes %v, want thread.name demo and a thread.id", s.Attrs)
		}
		for k, want := range map[string]string{"service.name": "demo-service", "process.executable.name": "demo"} {
			if s.Resource[k] != want {
				t.Fatalf("resource %s = %q, want %q (resource %v)", k, s.Resource[k], want, s.Resource)
			}
		}
		if s.Resource["host.name"] == "" || !strings.HasSuffix(s.Resource["process.executable.path"], "/demo") {
			t.Fatalf("resource lacks host.name or process.executable.path: %v", s.Resource)
		}
	}
	for _, fn := range []string{"main.worker", "main.computeChecksums", "main.prepareReport", "main.hashBlocks"} {
		if !funcs[fn] {
			t.Errorf("no sample has %s", fn)
		}
	}
	if !strings.Contains(log, "dropped=0") {
		t.Errorf("agent log does not report dropped=0:\n%s", log)
	}
}

// awaitWindows waits (up to 15 s: the file exporter writes asynchronously)
// until the collector's output holds want windows besides old ones, and
// returns how many it holds.
func awaitWindows(t *testing.T, col *collectortest.Collector, seen, old map[uint64]bool, want int) int {
	t.Helper()
	n := 0
	testprog.PollEvery(15*time.Second, 250*time.Millisecond, func() bool {
		windowsReceived(t, col, seen)
		n = 0
		for k := range seen {
			if !old[k] {
				n++
			}
		}
		return n >= want
	})
	return n
}

// rss returns a process's resident set size in KiB.
func rss(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return 0
}

var sentRE = regexp.MustCompile(`exporter=otlp sent=(\d+) failed_attempts=(\d+) dropped=(\d+)`)

func TestAgentCollectorOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the outage test takes 25 s")
	}
	_, demo := macprofBinary(t)
	// The two outages run side by side, each with its own collector and a
	// demo only its agent's --name matches, to halve the test's wall time.
	t.Run("15s outage loses nothing", func(t *testing.T) {
		t.Parallel()
		col := collectortest.Start(t)
		testprog.Start(t, demo, "-threads", "1", "-duration", "1h")
		old := windowsReceived(t, col, map[uint64]bool{})
		seen := map[uint64]bool{}
		const queueBytes = 16 << 20
		agent, wait := startAgent(t, "--name", onlyThis(demo+" -threads 1 -duration 1h"), "--otlp-endpoint", "http://"+col.HTTPAddr,
			"--window", "1s", "-d", "25s", "--telemetry", "none", "--queue-windows", "64",
			"--queue-bytes", strconv.Itoa(queueBytes), "--shutdown-timeout", "20s")
		time.Sleep(5 * time.Second)
		col.Stop()
		windowsReceived(t, col, seen)
		base, peak := rss(agent.Process.Pid), 0
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
			peak = max(peak, rss(agent.Process.Pid))
		}
		col.Restart()
		log := wait()
		m := sentRE.FindStringSubmatch(log)
		if m == nil {
			t.Fatalf("agent log lacks its exporter summary:\n%s", log)
		}
		sent, _ := strconv.Atoi(m[1])
		if m[3] != "0" {
			t.Errorf("agent dropped %s windows during a 15 s outage with room for 64:\n%s", m[3], log)
		}
		got := awaitWindows(t, col, seen, old, sent)
		// 25 one-second windows at most; about 84% of them are made with
		// CI and other tests loading both CPUs (windows end at drains,
		// which load delays). More than 15 means windows made during the
		// 15 s outage were sent after it: had they been lost, at most the
		// 5 s before and the 5 s after would have been.
		if sent <= 15 || got != sent {
			t.Errorf("agent sent %d windows in 25 s, collector wrote %d", sent, got)
		}
		if grew := (peak - base) * 1024; grew > queueBytes+32<<20 {
			t.Errorf("agent RSS grew by %d bytes during the outage (queue bound %d)", grew, queueBytes)
		}
		t.Logf("sent %d windows, collector wrote %d; RSS %d KiB before the outage, peak %d KiB", sent, got, base, peak)
	})

	t.Run("longer than the queue holds", func(t *testing.T) {
		t.Parallel()
		col := collectortest.Start(t)
		testprog.Start(t, demo, "-threads", "1", "-duration", "2h")
		old := windowsReceived(t, col, map[uint64]bool{})
		seen := map[uint64]bool{}
		_, wait := startAgent(t, "--name", onlyThis(demo+" -threads 1 -duration 2h"), "--otlp-endpoint", "http://"+col.HTTPAddr,
			"--window", "1s", "-d", "20s", "--telemetry", "none", "--queue-windows", "3", "--shutdown-timeout", "20s")
		time.Sleep(3 * time.Second)
		col.Stop()
		windowsReceived(t, col, seen)
		before := 0 // this agent's windows that arrived before the outage
		for k := range seen {
			if !old[k] {
				before++
			}
		}
		time.Sleep(10 * time.Second)
		col.Restart()
		log := wait()
		m := sentRE.FindStringSubmatch(log)
		if m == nil {
			t.Fatalf("agent log lacks its exporter summary:\n%s", log)
		}
		dropped, _ := strconv.Atoi(m[3])
		sent, _ := strconv.Atoi(m[1])
		if dropped == 0 {
			t.Errorf("a 10 s outage with room for 3 windows dropped none:\n%s", log)
		}
		// How many windows follow the outage depends on how long the
		// collector takes to come back on a loaded machine: some must.
		if got := awaitWindows(t, col, seen, old, sent); got != sent || sent <= before {
			t.Errorf("after the outage: sent %d (%d before it), collector wrote %d (the agent must recover)", sent, before, got)
		}
		t.Logf("sent %d, dropped %d", sent, dropped)
	})
}

// onlyThis returns a --name pattern that matches the command line of the
// test's own build of a program and nothing else: other tests (diff's, run in
// parallel by go test) start programs of the same name.
func onlyThis(path string) string { return "^" + regexp.QuoteMeta(path) + "( |$)" }

// With every exporter down from the start, the agent says so at WARN, with
// the reason, as soon as the first window's export fails (within one
// window), and exits non-zero at the end: a run that delivered nothing is a
// failure a supervisor can see.
func TestAgentExportersDownFromStart(t *testing.T) {
	macprof, demo := macprofBinary(t)
	testprog.Start(t, demo, "-threads", "1", "-duration", "0")
	dead := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().String()
	}
	const window = 3 * time.Second
	cmd := exec.Command(macprof, "agent", "--name", onlyThis(demo), "--rescan", "200ms", "--window", window.String(), "-F", "49",
		"-d", "8s", "--telemetry", "none", "--otlp-endpoint", "http://"+dead(), "--otlp-protocol", "http/protobuf",
		"--pyroscope-url", "http://"+dead(), "--shutdown-timeout", "1s")
	var log safeBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Timed by the log's own clock, from the line that says the agent
	// started: on a loaded machine the command took seconds to start
	// (first WARN 7.8 s after the exec, under go test ./... beside two
	// busy jobs).
	warned := map[string]time.Time{}
	var started time.Time
	testprog.PollEvery(20*time.Second, 50*time.Millisecond, func() bool {
		for _, line := range strings.Split(log.String(), "\n") {
			if started.IsZero() && strings.Contains(line, `msg="agent started"`) {
				started = logTime(t, line)
			}
			for _, exp := range []string{"otlp", "pyroscope"} {
				if _, ok := warned[exp]; !ok && strings.Contains(line, "level=WARN") && strings.Contains(line, "uploader="+exp) &&
					strings.Contains(line, "connection refused") {
					warned[exp] = logTime(t, line)
				}
			}
		}
		return len(warned) == 2
	})
	if started.IsZero() {
		t.Fatalf("the agent did not log that it started %v after its exec:\n%s", time.Since(start), log.String())
	}
	for _, exp := range []string{"otlp", "pyroscope"} {
		at, ok := warned[exp]
		if !ok {
			t.Errorf("no WARN with the reason for %s:\n%s", exp, log.String())
		} else if d := at.Sub(started); d > 2*window {
			t.Errorf("%s: first WARN %v after the agent started, more than one %v window after the first export:\n%s", exp, d, window, log.String())
		} else {
			t.Logf("%s: first WARN %v after the agent started, %v after its exec", exp, d, at.Sub(start))
		}
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("agent whose every export failed exited with %v, want status 1:\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "no export succeeded since start") {
		t.Errorf("the agent's log does not say that nothing was sent:\n%s", log.String())
	}
}

// The agent is never silent about an exporter it never reached: an idle
// target (nothing to send) with a dead OTLP endpoint gets a WARN with the
// reason once the first window is over, and exit status 1; the agent's
// own metrics refused with 404 (as Grafana Pyroscope's OTLP port, which has
// no /v1/metrics, answers) get a WARN with the reason, and status 1 too.
func TestAgentNeverSilent(t *testing.T) {
	macprof, _ := macprofBinary(t)
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatalf("this test profiles sleep: %v", err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	profiles := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/v1development/profiles" {
			http.NotFound(w, r)
		}
	}))
	defer profiles.Close()
	pid := strconv.Itoa(sleep.Process.Pid)
	for _, c := range []struct {
		name string
		args []string
		warn []string
	}{
		{"idle target, dead exporter", []string{"--otlp-endpoint", "http://" + dead, "--telemetry", "none"},
			[]string{"level=WARN", "exporter=otlp", "connection refused"}},
		{"metrics refused", []string{"--otlp-endpoint", profiles.URL},
			[]string{"level=WARN", `msg="agent metrics: export failed"`, "404"}},
	} {
		cmd := exec.Command(macprof, append([]string{"agent", "-p", pid, "-d", "4", "--window", "1"}, c.args...)...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("%s: agent exited with %v, want status 1:\n%s", c.name, err, out)
		}
		found := false
		for _, line := range strings.Split(string(out), "\n") {
			all := true
			for _, w := range c.warn {
				all = all && strings.Contains(line, w)
			}
			found = found || all
		}
		if !found {
			t.Errorf("%s: no line with %q:\n%s", c.name, c.warn, out)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: the agent ran %v for -d 4", c.name, d)
		}
	}
}

// logTime returns the time= of a log line of the agent's.
func logTime(t *testing.T, line string) time.Time {
	t.Helper()
	i := strings.Index(line, "time=")
	if i < 0 {
		t.Fatalf("log line without time=: %q", line)
	}
	f := strings.Fields(line[i+len("time="):])
	at, err := time.Parse(time.RFC3339Nano, f[0])
	if err != nil {
		t.Fatalf("log line %q: %v", line, err)
	}
	return at
}
