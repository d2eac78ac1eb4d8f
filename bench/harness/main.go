// Command harness measures macprof against its peers side by side, in one
// run, on the same machine and the same workload, and prints ratios.
//
//	harness snapshot [-threads 64] [-runs 5]
//	    wall time of `macprof snapshot -p PID` vs `eu-stack -p PID` on a
//	    target with N busy threads.
//	harness agent [-threads 50] [-duration 10m]
//	    CPU time and peak memory of `macprof agent` at its default rate,
//	    profiling a target with N busy threads and exporting every window
//	    (to a local Pyroscope-compatible sink that accepts everything).
//	harness overhead [-rates 99,999] [-duration 10s] [-rounds 3]
//	    throughput of the demo workload alone, under `macprof record` and
//	    under `perf record -g`, at each rate, interleaved round by round.
//
// It builds macprof and the workloads itself (go, gcc), so run it from the
// repository root: go run ./bench/harness snapshot
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: harness snapshot|overhead [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "snapshot":
		err = snapshot(os.Args[2:])
	case "overhead":
		err = overhead(os.Args[2:])
	case "agent":
		err = agentCost(os.Args[2:])
	default:
		err = fmt.Errorf("unknown benchmark %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

// build compiles macprof, the demo workload and the C target into dir.
func build(dir string) (macprof, demo, deep string, err error) {
	macprof, demo, deep = filepath.Join(dir, "macprof"), filepath.Join(dir, "demo"), filepath.Join(dir, "deep")
	steps := [][]string{
		{"go", "build", "-o", macprof, "./cmd/macprof"},
		{"go", "build", "-o", demo, "./bench/demo"},
		{"gcc", "-O0", "-pthread", "-fno-omit-frame-pointer", "-o", deep, "internal/testprog/src/deep.c"},
	}
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return "", "", "", fmt.Errorf("%s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	return macprof, demo, deep, nil
}

// startReady starts a program and waits for its "ready" line.
func startReady(bin string, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if sc.Text() == "ready" {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd, nil
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, fmt.Errorf("%s exited before it was ready", bin)
}

func timeRun(name string, args ...string) (time.Duration, error) {
	start := time.Now()
	out, err := exec.Command(name, args...).CombinedOutput()
	d := time.Since(start)
	var ee *exec.ExitError
	// eu-stack exits 1 when some frames could not be unwound; that is
	// still a complete run.
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return d, fmt.Errorf("%s: %v\n%.500s", name, err, out)
	}
	return d, nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func snapshot(args []string) error {
	fs := flag.NewFlagSet("snapshot", flag.ExitOnError)
	threads := fs.Int("threads", 64, "busy threads in the target")
	runs := fs.Int("runs", 5, "runs of each tool (alternating)")
	nice := fs.Int("nice", 0, "run both tools under nice -n N (negative needs root)")
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
	eu, err := exec.LookPath("eu-stack")
	if err != nil {
		return errors.New("eu-stack not found: apt-get install elfutils")
	}
	target, err := startReady(deep, strconv.Itoa(*threads), "20")
	if err != nil {
		return err
	}
	defer func() { target.Process.Kill(); target.Wait() }()
	pid := strconv.Itoa(target.Process.Pid)
	var mp, es []time.Duration
	niced := func(args ...string) (string, []string) {
		if *nice == 0 {
			return args[0], args[1:]
		}
		return "nice", append([]string{"-n", strconv.Itoa(*nice)}, args...)
	}
	for i := 0; i < *runs; i++ {
		name, a := niced(macprof, "snapshot", "-p", pid)
		d, err := timeRun(name, a...)
		if err != nil {
			return err
		}
		mp = append(mp, d)
		name, a = niced(eu, "-p", pid)
		d, err = timeRun(name, a...)
		if err != nil {
			return err
		}
		es = append(es, d)
	}
	// The stop time macprof reports itself.
	out, _ := exec.Command(macprof, "snapshot", "-p", pid).Output()
	stopped := regexp.MustCompile(`stopped for ([^)]+)\)`).FindSubmatch(out)
	m, e := median(mp), median(es)
	fmt.Printf("snapshot of %d busy threads, nice %d, median of %d runs each (alternating):\n", *threads, *nice, *runs)
	fmt.Printf("  macprof snapshot: %v (target stopped for %s)\n  eu-stack:         %v\n  ratio macprof/eu-stack: %.4fx\n",
		m.Round(time.Microsecond), stoppedText(stopped), e.Round(time.Millisecond), float64(m)/float64(e))
	return nil
}

func stoppedText(m [][]byte) string {
	if len(m) < 2 {
		return "?"
	}
	return string(m[1])
}

var throughputRE = regexp.MustCompile(`throughput ([0-9.]+) units/s`)

// runDemo runs the demo under an optional profiler and returns its
// throughput.
func runDemo(prefix []string, demo string, dur time.Duration) (float64, error) {
	args := append(append([]string{}, prefix...), demo, "-threads", "2", "-duration", dur.String())
	cmd := exec.Command(args[0], args[1:]...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%s: %v\n%.1000s", strings.Join(args, " "), err, out)
	}
	m := throughputRE.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("%s printed no throughput:\n%.1000s", strings.Join(args, " "), out)
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

func overhead(args []string) error {
	fs := flag.NewFlagSet("overhead", flag.ExitOnError)
	rates := fs.String("rates", "99,999", "sampling rates in Hz")
	dur := fs.Duration("duration", 10*time.Second, "length of each workload run")
	rounds := fs.Int("rounds", 3, "interleaved rounds")
	fs.Parse(args)
	dir, err := os.MkdirTemp("", "macprof-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	macprof, demo, _, err := build(dir)
	if err != nil {
		return err
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		return errors.New("perf not found: apt-get install linux-perf")
	}
	type key struct {
		tool string
		hz   string
	}
	res := map[key][]float64{}
	hzs := strings.Split(*rates, ",")
	for r := 0; r < *rounds; r++ {
		v, err := runDemo(nil, demo, *dur)
		if err != nil {
			return err
		}
		res[key{"alone", ""}] = append(res[key{"alone", ""}], v)
		for _, hz := range hzs {
			v, err := runDemo([]string{macprof, "record", "-q", "-F", hz, "-o", filepath.Join(dir, "p.pb.gz"), "--"}, demo, *dur)
			if err != nil {
				return err
			}
			res[key{"macprof", hz}] = append(res[key{"macprof", hz}], v)
			v, err = runDemo([]string{perf, "record", "-q", "-g", "-F", hz, "-o", filepath.Join(dir, "perf.data"), "--"}, demo, *dur)
			if err != nil {
				return err
			}
			res[key{"perf", hz}] = append(res[key{"perf", hz}], v)
		}
	}
	med := func(v []float64) float64 {
		s := append([]float64(nil), v...)
		sort.Float64s(s)
		return s[len(s)/2]
	}
	base := med(res[key{"alone", ""}])
	fmt.Printf("demo workload, 2 busy threads, %v per run, median of %d interleaved rounds\n", *dur, *rounds)
	fmt.Printf("  alone: %.1f units/s\n", base)
	for _, hz := range hzs {
		m, p := med(res[key{"macprof", hz}]), med(res[key{"perf", hz}])
		fmt.Printf("  %4s Hz: macprof %.1f units/s (loss %.2f%%), perf record -g %.1f units/s (loss %.2f%%)\n",
			hz, m, 100*(1-m/base), p, 100*(1-p/base))
	}
	return nil
}

func agentCost(args []string) error {
	fs := flag.NewFlagSet("agent", flag.ExitOnError)
	threads := fs.Int("threads", 50, "busy threads in the target")
	dur := fs.Duration("duration", 10*time.Minute, "how long the agent runs")
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
	cmd := exec.Command(macprof, "agent", "--pid", strconv.Itoa(target.Process.Pid), "-d", dur.String(),
		"--pyroscope-url", "http://"+ln.Addr().String(), "--pyroscope-app", "bench.cpu", "--telemetry", "none")
	var log strings.Builder
	cmd.Stderr = &log
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("agent: %v\n%s", err, log.String())
	}
	el := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("macprof agent (default rate) on %d busy threads for %v:\n", *threads, el.Round(time.Second))
	fmt.Printf("  agent CPU %v = %.2f%% of one core; peak RSS %d MiB; %d windows pushed, %d KiB\n",
		cpu.Round(time.Millisecond), 100*cpu.Seconds()/el.Seconds(), ru.Maxrss/1024, pushes.Load(), bytesIn.Load()/1024)
	return nil
}
