//go:build linux && (amd64 || arm64)

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/internal/procstat"
	"github.com/macprof/macprof/internal/testprog"
)

var (
	binOnce  sync.Once
	binPath  string
	binErr   error
	demoPath string
)

// macprofBinary builds macprof, macprof-agent beside it, and the demo
// workload once per test run.
func macprofBinary(t *testing.T) (macprof, demo string) {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "macprof-bin-")
		if err != nil {
			binErr = err
			return
		}
		gobin, err := exec.LookPath("go")
		if err != nil {
			binErr = fmt.Errorf("the go command is needed on PATH: %v", err)
			return
		}
		binPath, demoPath = filepath.Join(dir, "macprof"), filepath.Join(dir, "demo")
		// macprof agent runs the macprof-agent beside macprof.
		for _, b := range [][2]string{{binPath, "."}, {filepath.Join(dir, agentBinary), "../macprof-agent"}, {demoPath, "../../bench/demo"}} {
			if out, err := exec.Command(gobin, "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
				binErr = fmt.Errorf("build %s: %v\n%s", b[1], err, out)
				return
			}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath, demoPath
}

// procCPU returns a process's total CPU time from /proc (clock ticks).
func procCPU(t *testing.T, pid int) time.Duration {
	s, err := procstat.Read(pid)
	if err != nil || !s.Has(procstat.FieldSTime) {
		t.Fatalf("%+v, %v", s, err)
	}
	return time.Duration(s.CPUTicks()) * (time.Second / procstat.ClockTicks)
}

// cpuPoll is a process's CPU time (its threads' schedstat) at a moment.
type cpuPoll struct {
	at  time.Time
	cpu time.Duration
}

// pollCPU reads pid's CPU time every 5 ms until stop is closed, then sends
// the readings. Threads that exit take their time out of the sum: use it on
// processes whose threads live on (the demo's).
func pollCPU(t *testing.T, pid int, stop <-chan struct{}) <-chan []cpuPoll {
	t.Helper()
	out := make(chan []cpuPoll, 1)
	dir := fmt.Sprintf("/proc/%d/task", pid)
	go func() {
		var polls []cpuPoll
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			tasks, _ := os.ReadDir(dir)
			var sum time.Duration
			for _, e := range tasks {
				b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
				if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
					n, _ := strconv.ParseInt(f[0], 10, 64)
					sum += time.Duration(n)
				}
			}
			polls = append(polls, cpuPoll{time.Now(), sum})
			select {
			case <-stop:
				out <- polls
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// cpuBetween returns the CPU time used from start to end, interpolating
// between the readings around each.
func cpuBetween(t *testing.T, polls []cpuPoll, start, end time.Time) time.Duration {
	t.Helper()
	at := func(m time.Time) time.Duration {
		for i := 1; i < len(polls); i++ {
			a, b := polls[i-1], polls[i]
			if !m.After(b.at) {
				if !m.After(a.at) || !b.at.After(a.at) {
					return a.cpu
				}
				frac := float64(m.Sub(a.at)) / float64(b.at.Sub(a.at))
				return a.cpu + time.Duration(frac*float64(b.cpu-a.cpu))
			}
		}
		t.Fatalf("no CPU reading after %v", m)
		return 0
	}
	if len(polls) < 2 || start.Before(polls[0].at) {
		t.Fatalf("CPU readings do not cover the window from %v", start)
	}
	return at(end) - at(start)
}

// TestRecordDemoProfile records the demo capturing from kernel samples
// (the default in cpu mode) and by stopping threads.
func TestRecordDemoProfile(t *testing.T) {
	for _, tc := range []struct {
		capture string
		hz      int
	}{{"auto", 99}, {"stop", 99}, {"auto", 999}} {
		t.Run(fmt.Sprintf("%s/%dHz", tc.capture, tc.hz), func(t *testing.T) { testRecordDemoProfile(t, tc.capture, tc.hz) })
	}
}

func testRecordDemoProfile(t *testing.T, capture string, hz int) {
	macprof, demo := macprofBinary(t)
	p := testprog.Start(t, demo, "-threads", "2", "-duration", "0")
	dir := t.TempDir()
	out := filepath.Join(dir, "cpu.pb.gz")
	const secs = 3
	cmd := exec.Command(macprof, "record", "-q", "--capture", capture, "-p", strconv.Itoa(p.PID), "-F", strconv.Itoa(hz), "-d", fmt.Sprintf("%ds", secs),
		"-o", out, "-o", filepath.Join(dir, "flame.svg"), "-o", filepath.Join(dir, "stacks.folded"))
	stop := make(chan struct{})
	polls := pollCPU(t, p.PID, stop)
	b, err := cmd.CombinedOutput()
	close(stop)
	if err != nil {
		t.Fatalf("record: %v\n%s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	prof, err := pprof.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := prof.CheckValid(); err != nil {
		t.Fatal(err)
	}
	// The target's CPU time within the profile's window, not macprof's
	// whole life: starting and writing outputs take long under load.
	start := time.Unix(0, prof.TimeNanos)
	cpuUsed := cpuBetween(t, <-polls, start, start.Add(time.Duration(prof.DurationNanos)))
	var total, checks, report, whole int64
	for _, s := range prof.Sample {
		total += s.Value[0]
		seen := map[string]bool{}
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				seen[ln.Function.Name] = true
			}
		}
		if seen["main.computeChecksums"] {
			checks += s.Value[0]
		}
		if seen["main.prepareReport"] {
			report += s.Value[0]
		}
		if seen["runtime.goexit"] || seen["runtime.goexit.abi0"] {
			whole += s.Value[0]
		}
	}
	// Samples account for the CPU time the target used (within 10%).
	sampled := time.Duration(total) * time.Second / time.Duration(hz)
	ratio := float64(sampled) / float64(cpuUsed)
	t.Logf("samples %d = %v of CPU; target used %v (ratio %.3f); rate x duration x 2 threads = %d samples",
		total, sampled, cpuUsed, ratio, hz*secs*2)
	if ratio < 0.9 || ratio > 1.1 {
		t.Errorf("sampled CPU %v vs the target's %v: off by more than 10%%", sampled, cpuUsed)
	}
	if share := float64(checks+report) / float64(total); share < 0.8 {
		t.Errorf("computeChecksums+prepareReport hold %.0f%% of samples, want >= 80%%", share*100)
	}
	// Stacks are walked to their root (the workers keep 20 KiB arrays on
	// the stack: kernel samples' copies grow to hold them after the first
	// few samples: two each, 8 and 16 KiB, before 32 KiB holds them,
	// which on a starved machine can be a fifth of all samples).
	if share := float64(whole) / float64(total); share < 0.8 && total-whole > 6 {
		t.Errorf("%.0f%% of samples have whole stacks (down to runtime.goexit), want >= 80%%", share*100)
	}
	// go tool pprof opens it and ranks the workload's functions on top.
	top, err := exec.Command(testprog.GoTool(t), "tool", "pprof", "-top", "-cum", out).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, top)
	}
	for _, fn := range []string{"main.worker", "main.computeChecksums", "main.prepareReport", "main.hashBlocks", "main.sortRecords"} {
		if !bytes.Contains(top, []byte(fn)) {
			t.Errorf("go tool pprof -top does not list %s:\n%s", fn, top)
		}
	}
	for _, name := range []string{"flame.svg", "stacks.folded"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Contains(b, []byte("main.computeChecksums")) {
			t.Errorf("%s lacks the workload's functions (err %v)", name, err)
		}
	}
}

func TestRecordUnwritableOutputFailsFirst(t *testing.T) {
	macprof, _ := macprofBinary(t)
	start := time.Now()
	out, err := exec.Command(macprof, "record", "-d", "30s", "-o", "/nonexistent-dir/x.pb.gz", "--", "sleep", "30").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "/nonexistent-dir") {
		t.Fatalf("want a failure naming the output, got %v: %s", err, out)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the error came after sampling, not before")
	}
}

func TestRecordLaunchForwardsExitStatusAndFollowsChildren(t *testing.T) {
	macprof, demo := macprofBinary(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "f.folded")
	// A shell starts the demo as its child and exits with status 7.
	demoOut := filepath.Join(dir, "demo.out")
	script := fmt.Sprintf("%s -threads 1 -duration 1500ms >%s; exit 7", demo, demoOut)
	cmd := exec.Command(macprof, "record", "-q", "-o", out, "--", "sh", "-c", script)
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 7 {
		t.Fatalf("exit = %v, want status 7 forwarded", err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Any of the demo's frames: a loaded machine may give its worker a
	// few samples, all in one of its functions.
	if !bytes.Contains(b, []byte("main.worker")) {
		t.Fatalf("the child process was not followed: profile has no demo frames:\n%.2000s", b)
	}
	// All of the child's CPU time is counted, from its start (found up
	// to 100 ms later): its worker's share of its 1.5 s, at 99 Hz.
	var worker, samples float64
	dout, err := os.ReadFile(demoOut)
	if _, serr := fmt.Sscanf(string(regexp.MustCompile(`workers ran [0-9.]+%`).Find(dout)), "workers ran %f%%", &worker); err != nil || serr != nil {
		t.Fatalf("demo output %q: %v %v", dout, err, serr)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(line); strings.Contains(line, "main.worker") && len(f) > 0 {
			n, _ := strconv.ParseFloat(f[len(f)-1], 64)
			samples += n
		}
	}
	want := worker / 100 * 1.5 * 99
	t.Logf("worker samples %.0f, its CPU time %.0f%% of 1.5 s = %.0f samples", samples, worker, want)
	// On a loaded machine the worker may get a few percent of a CPU:
	// about 10 samples, of which the CPU time before the child was
	// followed and the rounding of counts can take two (seen: 8 of 10 at
	// load 40).
	if samples < min(0.85*want, want-2) || samples > 1.1*want+1 {
		t.Errorf("the child's worker has %.0f samples, want %.0f (its CPU time) -15%% to +10%%", samples, want)
	}
}

func TestRecordSIGINTWritesProfileAndDetaches(t *testing.T) {
	macprof, demo := macprofBinary(t)
	p := testprog.Start(t, demo, "-threads", "2", "-duration", "0")
	out := filepath.Join(t.TempDir(), "cpu.pb.gz")
	cmd := exec.Command(macprof, "record", "-q", "-p", strconv.Itoa(p.PID), "-o", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record after SIGINT: %v\n%s", err, stderr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatalf("no profile after SIGINT: %v", err)
	}
	defer f.Close()
	prof, err := pprof.Parse(f)
	if err != nil || len(prof.Sample) == 0 {
		t.Fatalf("profile after SIGINT: %v, %d samples", err, len(prof.Sample))
	}
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
	if !bytes.Contains(st, []byte("TracerPid:\t0\n")) {
		t.Fatalf("target still traced after SIGINT:\n%s", st)
	}
	before := procCPU(t, p.PID)
	time.Sleep(300 * time.Millisecond)
	if procCPU(t, p.PID) <= before {
		t.Fatal("target not running after macprof exited")
	}
}

func TestRecordTargetExitsMidRecording(t *testing.T) {
	macprof, demo := macprofBinary(t)
	p := testprog.Start(t, demo, "-threads", "2", "-duration", "1s")
	out := filepath.Join(t.TempDir(), "cpu.folded")
	b, err := exec.Command(macprof, "record", "-q", "-d", "20s", "-p", strconv.Itoa(p.PID), "-o", out).CombinedOutput()
	if err != nil {
		t.Fatalf("record: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(data, []byte("main.hashBlocks")) {
		t.Fatalf("profile of an exited target lacks its frames: %v\n%.1000s", err, data)
	}
}

// TestRecordThreadChurn records a target that creates and destroys threads
// constantly (thousands a second) for 14 s and checks macprof neither fails
// nor grows its open files or memory while it does.
func TestRecordThreadChurn(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test records for 14 s")
	}
	macprof, _ := macprofBinary(t)
	p := testprog.Start(t, testprog.BuildC(t, "churn.c"), "4")
	out := filepath.Join(t.TempDir(), "churn.folded")
	cmd := exec.Command(macprof, "record", "-q", "-F", "199", "-d", "14s", "-p", strconv.Itoa(p.PID), "-o", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fds := func() int {
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		return len(ents)
	}
	time.Sleep(4 * time.Second)
	fd0, rss0 := fds(), rss(cmd.Process.Pid)
	fdMax, rssMax := fd0, rss0
	for i := 0; i < 4; i++ {
		time.Sleep(2 * time.Second)
		fdMax, rssMax = max(fdMax, fds()), max(rssMax, rss(cmd.Process.Pid))
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record: %v\n%s", err, stderr.String())
	}
	// The main thread, which creates and joins the others, is always
	// sampled; each short-lived thread runs about one period, so that
	// under load none may be (its CPU time is then shown [unsampled]).
	b, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(b, []byte(";main;")) {
		t.Fatalf("profile lacks the main thread's stacks: %v\n%.500s", err, b)
	}
	t.Logf("open files %d -> max %d; RSS %d KiB -> max %d KiB; %d stacks of the short-lived threads' function",
		fd0, fdMax, rss0, rssMax, bytes.Count(b, []byte(";brief")))
	if fdMax > fd0+16 {
		t.Errorf("open files grew from %d to %d while threads came and went", fd0, fdMax)
	}
	if rssMax > rss0+64<<10 {
		t.Errorf("RSS grew from %d KiB to %d KiB", rss0, rssMax)
	}
}
