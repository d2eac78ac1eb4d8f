package main

// The agent subcommand: the agent's own CPU, RSS and wake-ups while it
// profiles a busy target, beside perf record's over the same target.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/macprof/macprof/bench/internal/ready"
)

// footprint is what one profiler run cost, from its rusage at exit.
type footprint struct {
	wall, user, sys time.Duration
	nvcsw, nivcsw   int64
	maxRSSKiB       int64
	rss             []string // RSS at each -rss-every
	// steady is the part of the run between the first and the last
	// -rss-every reading, without its start and its end (a profiler's
	// first look at the target's images, its last export or file).
	steady procSpan
}

// procSpan is what a process used between two reads of /proc.
type procSpan struct {
	wall, cpu     time.Duration
	nvcsw, nivcsw int64
}

func (p procSpan) share() float64 {
	if p.wall <= 0 {
		return 0
	}
	return 100 * p.cpu.Seconds() / p.wall.Seconds()
}

func (p procSpan) perSecond() (vol, invol float64) {
	if p.wall <= 0 {
		return 0, 0
	}
	return float64(p.nvcsw) / p.wall.Seconds(), float64(p.nivcsw) / p.wall.Seconds()
}

// procUsage reads a process's CPU time (/proc/PID/stat, in clock ticks of
// 10 ms) and its threads' context switches (/proc/PID/task/*/status).
func procUsage(pid int) (cpu time.Duration, vol, invol int64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, 0, 0, false
	}
	// utime and stime are fields 14 and 15, the 12th and 13th after comm.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	cpu = time.Duration(ut+st) * 10 * time.Millisecond
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			n, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "voluntary_ctxt_switches:":
				vol += n
			case "nonvoluntary_ctxt_switches:":
				invol += n
			}
		}
	}
	return cpu, vol, invol, true
}

// share is the run's CPU in percent of one core.
func (f footprint) share() float64 {
	if f.wall <= 0 {
		return 0
	}
	return 100 * (f.user + f.sys).Seconds() / f.wall.Seconds()
}

// perSecond returns the voluntary and involuntary context switches a second.
func (f footprint) perSecond() (vol, invol float64) {
	if f.wall <= 0 {
		return 0, 0
	}
	return float64(f.nvcsw) / f.wall.Seconds(), float64(f.nivcsw) / f.wall.Seconds()
}

func (f footprint) String() string {
	v, iv := f.perSecond()
	sv, siv := f.steady.perSecond()
	return fmt.Sprintf("%v: CPU %v (user %v, system %v) = %.3f%% of one core; switches %.1f/s vol., %.1f/s invol.; peak RSS %d MiB; RSS %s MiB; steady %v: %.3f%%, %.1f/%.1f switches/s",
		f.wall.Round(time.Second), (f.user + f.sys).Round(time.Millisecond), f.user.Round(time.Millisecond), f.sys.Round(time.Millisecond),
		f.share(), v, iv, f.maxRSSKiB/1024, strings.Join(f.rss, ", "), f.steady.wall.Round(time.Second), f.steady.share(), sv, siv)
}

// measure runs cmd to its end and returns its rusage as a footprint. A
// command that does not end by itself gets SIGINT after dur (perf record
// then writes its file and exits); one still running 2 minutes after that
// is killed.
func measure(cmd *exec.Cmd, dur, every time.Duration, interrupt bool) (footprint, error) {
	var f footprint
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return f, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(every)
	defer tick.Stop()
	end := time.NewTimer(dur)
	defer end.Stop()
	var err error
	var first, last procSpan
	var firstAt, lastAt time.Time
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick.C:
			if kb := rssKiB(cmd.Process.Pid); kb > 0 {
				f.rss = append(f.rss, fmt.Sprintf("%d", kb/1024))
			}
			if cpu, v, iv, ok := procUsage(cmd.Process.Pid); ok {
				last, lastAt = procSpan{cpu: cpu, nvcsw: v, nivcsw: iv}, time.Now()
				if firstAt.IsZero() {
					first, firstAt = last, lastAt
				}
			}
		case <-end.C:
			if interrupt {
				cmd.Process.Signal(os.Interrupt)
			}
			end.Reset(2 * time.Minute)
			interrupt = false
			if time.Since(start) > dur+time.Minute {
				cmd.Process.Kill()
			}
		}
	}
	f.wall = time.Since(start)
	f.steady = procSpan{wall: lastAt.Sub(firstAt), cpu: last.cpu - first.cpu, nvcsw: last.nvcsw - first.nvcsw, nivcsw: last.nivcsw - first.nivcsw}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return f, errors.New("no rusage")
	}
	f.user, f.sys = time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
	f.nvcsw, f.nivcsw, f.maxRSSKiB = ru.Nvcsw, ru.Nivcsw, ru.Maxrss
	return f, err
}

func agentCost(args []string) error {
	fs := flag.NewFlagSet("agent", flag.ExitOnError)
	threads := fs.Int("threads", 50, "busy threads in the target")
	dur := fs.Duration("duration", 5*time.Minute, "how long each run of the agent (and of perf) lasts")
	rounds := fs.Int("rounds", 3, "rounds; each runs the agent and perf once, alternating which goes first")
	capture := fs.String("capture", "auto", "the agent's --capture: auto (kernel samples in cpu mode on Linux) or stop")
	every := fs.Duration("rss-every", time.Minute, "how often the agent's RSS is read, to show whether it stays bounded")
	noPerf := fs.Bool("no-perf", false, "leave perf out (for a quick look at the agent alone)")
	before := fs.String("before", "", "a macprof binary of another revision (macprof-agent beside it), run in each round in turn with this checkout's, for a before/after comparison under the same load")
	fs.Parse(args)
	if *before != "" {
		for _, f := range []string{*before, filepath.Join(filepath.Dir(*before), "macprof-agent")} {
			if _, err := os.Stat(f); err != nil {
				return fmt.Errorf("-before: %w", err)
			}
		}
	}
	var perf string
	if !*noPerf {
		var err error
		if perf, err = exec.LookPath("perf"); err != nil {
			return errors.New("perf not found: apt-get install linux-perf (or pass -no-perf)")
		}
	}
	dir, err := os.MkdirTemp("", "macprof-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	macprof, _, deep, err := build(dir)
	if err != nil {
		return err
	}
	var pushes, bytesIn atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		pushes.Add(1)
		bytesIn.Add(n)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	target, err := ready.Start(deep, strconv.Itoa(*threads), "20")
	if err != nil {
		return err
	}
	defer func() { target.Process.Kill(); target.Wait() }()
	pid := strconv.Itoa(target.Process.Pid)
	loadBefore := loadAverage()
	runAgent := func(macprof string) (footprint, error) {
		cmd := exec.Command(macprof, "agent", "--pid", pid, "-d", dur.String(), "--capture", *capture,
			"--pyroscope-url", "http://"+ln.Addr().String(), "--pyroscope-app", "bench", "--telemetry", "none")
		var log strings.Builder
		cmd.Stderr = &log
		f, err := measure(cmd, *dur, *every, false)
		if err != nil {
			return f, fmt.Errorf("agent: %v\n%s", err, log.String())
		}
		return f, nil
	}
	// perf's floor: the same rate and call graphs into a file, the file's
	// writing and build-id pass at the end included, as the agent's last
	// window and export are.
	runPerf := func() (footprint, error) {
		cmd := exec.Command(perf, "record", "-q", "-F", "19", "-g", "-p", pid, "-o", filepath.Join(dir, "perf.data"))
		var log strings.Builder
		cmd.Stderr = &log
		f, err := measure(cmd, *dur, *every, true)
		// perf record ends its run by raising the SIGINT it handled.
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
				err = nil
			}
		}
		if err != nil {
			return f, fmt.Errorf("perf record: %v\n%s", err, log.String())
		}
		return f, nil
	}
	var agents, befores, perfs []footprint
	for r := 0; r < *rounds; r++ {
		order := []string{"agent", "before", "perf"}
		if r%2 == 1 {
			order = []string{"perf", "before", "agent"}
		}
		if r%4 >= 2 {
			// Each of the two agents as often first, and next to perf.
			for i, w := range order {
				switch w {
				case "agent":
					order[i] = "before"
				case "before":
					order[i] = "agent"
				}
			}
		}
		for _, which := range order {
			switch {
			case which == "agent":
				f, err := runAgent(macprof)
				if err != nil {
					return err
				}
				agents = append(agents, f)
				fmt.Printf("round %d, macprof agent: %s\n", r+1, f)
			case which == "before":
				if *before == "" {
					continue
				}
				f, err := runAgent(*before)
				if err != nil {
					return err
				}
				befores = append(befores, f)
				fmt.Printf("round %d, agent before: %s\n", r+1, f)
			case perf != "":
				f, err := runPerf()
				if err != nil {
					return err
				}
				perfs = append(perfs, f)
				fmt.Printf("round %d, perf record:   %s\n", r+1, f)
			}
		}
	}
	loadAfter := loadAverage()
	fmt.Printf("macprof agent (19 Hz, --capture %s) on %d busy threads, %d rounds of %v; %d windows pushed, %d KiB\n",
		*capture, *threads, *rounds, *dur, pushes.Load(), bytesIn.Load()/1024)
	fmt.Printf("  agent: %s\n  perf:  %s\n", summary(agents), summary(perfs))
	if *before != "" {
		fmt.Printf("  agent before (%s): %s\n", *before, summary(befores))
	}
	fmt.Printf("  load average (1, 5, 15 min) before: %s; after: %s\n", loadBefore, loadAfter)
	fmt.Println("Row for bench/RESULTS.md (Agent):")
	fmt.Println(resultHeader)
	fmt.Println(resultRow(*threads, *rounds, *dur, revision(), agents, perfs, firstField(loadBefore), firstField(loadAfter)))
	if *before != "" {
		fmt.Println(resultRow(*threads, *rounds, *dur, "before: "+*before, befores, perfs, firstField(loadBefore), firstField(loadAfter)))
	}
	return nil
}

// summary gives the medians of a profiler's runs.
func summary(fs []footprint) string {
	if len(fs) == 0 {
		return "not run"
	}
	share, vol, invol, rss := medians(fs)
	ss, sv, siv := steadyMedians(fs)
	return fmt.Sprintf("median %.3f%% of one core (runs %s), %.1f/%.1f switches/s vol./invol., peak RSS %d MiB; steady part: %.3f%%, %.1f/%.1f switches/s",
		share, shares(fs), vol, invol, rss, ss, sv, siv)
}

// medians returns the medians of the runs' CPU shares, switches a second
// and the largest peak RSS (MiB).
func medians(fs []footprint) (share, vol, invol float64, peakMiB int64) {
	var s, v, iv []float64
	for _, f := range fs {
		a, b := f.perSecond()
		s, v, iv = append(s, f.share()), append(v, a), append(iv, b)
		peakMiB = max(peakMiB, f.maxRSSKiB/1024)
	}
	_, share, _ = quartiles(s)
	_, vol, _ = quartiles(v)
	_, invol, _ = quartiles(iv)
	return share, vol, invol, peakMiB
}

// steadyMedians returns the medians of the runs' steady CPU shares and
// switches a second.
func steadyMedians(fs []footprint) (share, vol, invol float64) {
	var s, v, iv []float64
	for _, f := range fs {
		a, b := f.steady.perSecond()
		s, v, iv = append(s, f.steady.share()), append(v, a), append(iv, b)
	}
	_, share, _ = quartiles(s)
	_, vol, _ = quartiles(v)
	_, invol, _ = quartiles(iv)
	return share, vol, invol
}

// shares lists each run's CPU share.
func shares(fs []footprint) string {
	var s []string
	for _, f := range fs {
		s = append(s, fmt.Sprintf("%.2f", f.share()))
	}
	return strings.Join(s, ", ")
}

// resultHeader heads resultRow's table: medians of the runs, each run's
// share in parentheses; "steady" leaves out each run's start and end.
const resultHeader = `| macprof, target | runs | agent, share of one core | agent steady | agent switches/s vol. / invol. | agent peak RSS (RSS at each reading) | perf record -F 19 -g | perf steady | perf switches/s | perf peak RSS | load before → after |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |`

// resultRow is the Markdown table row of bench/RESULTS.md's Agent section:
// the agent's medians beside perf's, with the load that says how far to
// trust them.
func resultRow(threads, rounds int, dur time.Duration, rev string, agents, perfs []footprint, loadBefore, loadAfter string) string {
	aShare, aVol, aInvol, aRSS := medians(agents)
	sShare, sVol, sInvol := steadyMedians(agents)
	var rssRuns []string
	for _, f := range agents {
		rssRuns = append(rssRuns, strings.Join(f.rss, ", "))
	}
	perfCells := "not run | | |"
	if len(perfs) > 0 {
		pShare, pVol, pInvol, pRSS := medians(perfs)
		psShare, _, _ := steadyMedians(perfs)
		perfCells = fmt.Sprintf("**%.2f%%** (%s) | %.2f%% | %.1f / %.1f | %d MiB", pShare, shares(perfs), psShare, pVol, pInvol, pRSS)
	}
	return fmt.Sprintf("| `%s`, `deep.c` %d busy threads, 19 Hz | %d × %v | **%.2f%%** (%s) | %.2f%% | %.1f / %.1f (steady %.1f / %.1f) | %d MiB (%s) | %s | %s → %s |",
		rev, threads, rounds, dur, aShare, shares(agents), sShare, aVol, aInvol, sVol, sInvol, aRSS, strings.Join(rssRuns, "; "), perfCells, loadBefore, loadAfter)
}

// revision is the checkout's short commit, marked when files differ from it.
func revision() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "?"
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		rev += "+changes"
	}
	return rev
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

// loadAverage returns the first three fields of /proc/loadavg, or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

// rssKiB returns a process's resident set (VmRSS) in KiB, 0 if unknown.
func rssKiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}
