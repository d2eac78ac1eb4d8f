package main

// The agent subcommand: the agent's own CPU, RSS and wake-ups while it
// profiles a busy target.

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func agentCost(args []string) error {
	fs := flag.NewFlagSet("agent", flag.ExitOnError)
	threads := fs.Int("threads", 50, "busy threads in the target")
	dur := fs.Duration("duration", 10*time.Minute, "how long the agent runs")
	capture := fs.String("capture", "auto", "the agent's --capture: auto (kernel samples in cpu mode on Linux) or stop")
	every := fs.Duration("rss-every", time.Minute, "how often the agent's RSS is read, to show whether it stays bounded")
	fs.Parse(args)
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
	target, err := startReady(deep, strconv.Itoa(*threads), "20")
	if err != nil {
		return err
	}
	defer func() { target.Process.Kill(); target.Wait() }()
	loadBefore := loadAverage()
	cmd := exec.Command(macprof, "agent", "--pid", strconv.Itoa(target.Process.Pid), "-d", dur.String(), "--capture", *capture,
		"--pyroscope-url", "http://"+ln.Addr().String(), "--pyroscope-app", "bench", "--telemetry", "none")
	var log strings.Builder
	cmd.Stderr = &log
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	// The agent's RSS over the run: bounded means it levels off.
	var rssTrend []string
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(*every)
	defer tick.Stop()
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick.C:
			if kb := rssKiB(cmd.Process.Pid); kb > 0 {
				rssTrend = append(rssTrend, fmt.Sprintf("%v %d MiB", time.Since(start).Round(time.Second), kb/1024))
			}
		}
	}
	if err != nil {
		return fmt.Errorf("agent: %v\n%s", err, log.String())
	}
	el := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("macprof agent (default rate, --capture %s) on %d busy threads for %v:\n", *capture, *threads, el.Round(time.Second))
	fmt.Printf("  agent CPU %v = %.2f%% of one core (user %v, system %v); peak RSS %d MiB; %d windows pushed, %d KiB\n",
		cpu.Round(time.Millisecond), 100*cpu.Seconds()/el.Seconds(), time.Duration(ru.Utime.Nano()).Round(time.Millisecond),
		time.Duration(ru.Stime.Nano()).Round(time.Millisecond), ru.Maxrss/1024, pushes.Load(), bytesIn.Load()/1024)
	// Wake-ups cost the agent more than its work at this rate, and unlike
	// CPU time their count does not depend on how loaded the machine is.
	fmt.Printf("  context switches %.1f/s voluntary, %.1f/s involuntary\n", float64(ru.Nvcsw)/el.Seconds(), float64(ru.Nivcsw)/el.Seconds())
	fmt.Printf("  RSS over the run: %s\n", strings.Join(rssTrend, ", "))
	fmt.Printf("  load average (1, 5, 15 min) before: %s; after: %s\n", loadBefore, loadAverage())
	return nil
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
