// Command harness measures macprof against its peers side by side, in one
// run, on the same machine and the same workload, and prints ratios.
//
//	harness snapshot [-threads 64] [-runs 5]
//	    wall time of `macprof snapshot -p PID` vs `eu-stack -p PID` on a
//	    target with N busy threads.
//	harness agent [-threads 50] [-duration 5m] [-rounds 3] [-capture auto|stop] [-rss-every 1m] [-no-perf] [-before BIN]
//	    CPU time, wake-ups and memory of `macprof agent` at its default rate
//	    (19 Hz), profiling a target with N busy threads and exporting every
//	    window (to a local Pyroscope-compatible sink that accepts
//	    everything), beside `perf record -F 19 -g -p PID` on the same target
//	    for as long, alternating, -rounds times: each one's share of one
//	    core, context switches a second, peak RSS and the agent's RSS every
//	    -rss-every (to see that it levels off), their medians, the load
//	    average before and after, which says how far to trust the figures,
//	    and a row for bench/RESULTS.md. -before runs that macprof binary
//	    (another revision's, macprof-agent beside it) in each round too,
//	    in turn with this checkout's, and gives its row beside.
//	harness overhead [-workload go|c] [-rates 99,999] [-duration 5s] [-rounds 10] [-no-perf] [-no-stops] [-idle]
//	    throughput of the demo workload (go: bench/demo; c: bench/cbusy, C
//	    built with frame pointers and linked to the dynamic libc) alone (twice: the second run is a
//	    control that shows the measurement's noise), under `macprof record`
//	    (capturing from kernel samples, and with --capture stop, stopping
//	    threads) and under `perf record -g`, at each rate; every round runs each
//	    configuration once, in an order rotated from round to round, and
//	    losses are taken against the same round's run alone. Beside the
//	    throughput, it reports the share of their time the workload's
//	    threads spent on a CPU, which shows what a profiler takes without
//	    the run-to-run noise of the work's speed, and the CPU each profiler
//	    used while the workload's threads ran (the demo reads its parent's
//	    from /proc). -no-stops leaves out --capture stop. With -idle, macprof also
//	    runs beside the workload on a process that sleeps, which shows
//	    what the sampler costs before it captures anything.
//
// It builds macprof and the workloads itself (go, gcc), so run it from the
// repository root: go run ./bench/harness snapshot
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/macprof/macprof/bench/internal/ready"
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
		{"go", "build", "-o", filepath.Join(dir, "macprof-agent"), "./cmd/macprof-agent"}, // macprof agent runs it
		{"go", "build", "-o", demo, "./bench/demo"},
		{"gcc", "-O0", "-pthread", "-fno-omit-frame-pointer", "-o", deep, "internal/testprog/src/deep.c"},
	}
	return macprof, demo, deep, runSteps(steps)
}

// buildC compiles bench/cbusy into dir as most C programs are built that
// keep frame pointers: optimised, linked to the ordinary dynamic libc.
func buildC(dir string) (string, error) {
	cbusy := filepath.Join(dir, "cbusy")
	return cbusy, runSteps([][]string{{"gcc", "-O2", "-fno-omit-frame-pointer", "-pthread", "-o", cbusy, "bench/cbusy/cbusy.c"}})
}

// runSteps runs each command in turn, failing with the first one's output.
func runSteps(steps [][]string) error {
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	return nil
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
	target, err := ready.Start(deep, strconv.Itoa(*threads), "20")
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

var (
	throughputRE  = regexp.MustCompile(`throughput ([0-9.]+) units/s`)
	profilerCPURE = regexp.MustCompile(`profiler CPU ([0-9.]+[µm]?s)`)
	stoppedRE     = regexp.MustCompile(`stopped per capture: p50 ([0-9.]+[µm]?s), p99 ([0-9.]+[µm]?s)`)
	samplesOverRE = regexp.MustCompile(`macprof: ([0-9]+) samples over ([0-9.]+m?s)`)
	workersRanRE  = regexp.MustCompile(`workers ran ([0-9.]+)% of their time \(user ([0-9.]+)%`)
	processCPURE  = regexp.MustCompile(`process CPU ([0-9.]+)s`)
	parentCPURE   = regexp.MustCompile(`parent CPU while the workers ran ([0-9.]+)ms`)
)

// demoRun is one run of the demo workload, alone or under a profiler.
type demoRun struct {
	throughput  float64       // work units per second
	ran, user   float64       // share of their time the workers were on a CPU (in user mode), in percent; 0 if not reported
	profilerCPU time.Duration // macprof's own CPU time, as it reports it
	stopP50     time.Duration
	stopP99     time.Duration
	wall        time.Duration // the recording's length, as macprof reports it
	steal       float64       // share of the machine's CPU time the hypervisor took meanwhile
	// wholeCPU is the CPU time of the command run (the profiler and every
	// descendant it waited for) less the demo process's own: what the
	// profiler used from start to exit, its final symbolization and
	// writing included, measured the same way for macprof and perf; -1
	// when the demo did not report its own.
	wholeCPU time.Duration
	// runCPU is the profiler's CPU time while the demo's workers ran, as
	// the demo reads its parent's; -1 when not reported.
	runCPU time.Duration
}

// stealTicks returns the steal time of all CPUs from /proc/stat, in
// USER_HZ ticks: time a virtual machine's CPUs wanted to run but the
// hypervisor ran something else. It is 0 where /proc/stat has no such
// field.
func stealTicks() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	v, _ := strconv.ParseInt(f[8], 10, 64)
	return v
}

// runDemo runs a workload (its command line: bench/demo's, or one that
// prints the same lines) under an optional profiler and returns its
// throughput and, under macprof, macprof's own figures.
func runDemo(prefix, workload []string) (demoRun, error) {
	args := append(append([]string{}, prefix...), workload...)
	cmd := exec.Command(args[0], args[1:]...)
	steal0, start := stealTicks(), time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return demoRun{}, fmt.Errorf("%s: %v\n%.1000s", strings.Join(args, " "), err, out)
	}
	stealShare := float64(stealTicks()-steal0) / 100 / time.Since(start).Seconds() / float64(runtime.NumCPU())
	m := throughputRE.FindSubmatch(out)
	if m == nil {
		return demoRun{}, fmt.Errorf("%s printed no throughput:\n%.1000s", strings.Join(args, " "), out)
	}
	r := demoRun{steal: stealShare, wholeCPU: -1, runCPU: -1}
	if m := parentCPURE.FindSubmatch(out); m != nil {
		ms, _ := strconv.ParseFloat(string(m[1]), 64)
		r.runCPU = time.Duration(ms * float64(time.Millisecond))
	}
	if m := processCPURE.FindSubmatch(out); m != nil && cmd.ProcessState != nil {
		demoCPU, _ := strconv.ParseFloat(string(m[1]), 64)
		total := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		r.wholeCPU = total - time.Duration(demoCPU*float64(time.Second))
	}
	r.throughput, err = strconv.ParseFloat(string(m[1]), 64)
	if m := workersRanRE.FindSubmatch(out); m != nil {
		r.ran, _ = strconv.ParseFloat(string(m[1]), 64)
		r.user, _ = strconv.ParseFloat(string(m[2]), 64)
	}
	if m := profilerCPURE.FindSubmatch(out); m != nil {
		r.profilerCPU, _ = time.ParseDuration(strings.ReplaceAll(string(m[1]), "µ", "u"))
	}
	if m := stoppedRE.FindSubmatch(out); m != nil {
		r.stopP50, _ = time.ParseDuration(strings.ReplaceAll(string(m[1]), "µ", "u"))
		r.stopP99, _ = time.ParseDuration(strings.ReplaceAll(string(m[2]), "µ", "u"))
	}
	if m := samplesOverRE.FindSubmatch(out); m != nil {
		r.wall, _ = time.ParseDuration(string(m[2]))
	}
	return r, err
}

// overheadConfig is one way of running the workload in a round.
type overheadConfig struct {
	name   string // "alone", "alone (control)", "macprof 99 Hz", ...
	prefix func(dir string) []string
	// beside, when set, starts a command that runs beside the workload
	// (not in front of it) for the run, and returns the function that
	// ends it.
	beside func(dir string, dur time.Duration) (stop func(), err error)
}

// idleSampler runs `macprof record` at hz on a process that sleeps, beside
// the workload: what the sampler costs a busy machine before it captures
// anything (its timer's wake-ups, listing and reading the threads).
func idleSampler(macprof, hz string) func(dir string, dur time.Duration) (func(), error) {
	return func(dir string, dur time.Duration) (func(), error) {
		sleeper := exec.Command("sleep", "3600")
		if err := sleeper.Start(); err != nil {
			return nil, err
		}
		rec := exec.Command(macprof, "record", "-F", hz, "-d", (dur + 2*time.Second).String(),
			"-p", strconv.Itoa(sleeper.Process.Pid), "-o", filepath.Join(dir, "idle.pb.gz"))
		if err := rec.Start(); err != nil {
			sleeper.Process.Kill()
			sleeper.Wait()
			return nil, err
		}
		time.Sleep(300 * time.Millisecond) // attached and ticking
		return func() {
			rec.Process.Signal(os.Interrupt)
			rec.Wait()
			sleeper.Process.Kill()
			sleeper.Wait()
		}, nil
	}
}

func overhead(args []string) error {
	fs := flag.NewFlagSet("overhead", flag.ExitOnError)
	rates := fs.String("rates", "99,999", "sampling rates in Hz")
	dur := fs.Duration("duration", 5*time.Second, "length of each workload run")
	rounds := fs.Int("rounds", 10, "rounds; each runs every configuration once, in an order rotated round by round")
	workloadName := fs.String("workload", "go", "the workload: go (bench/demo, static Go) or c (bench/cbusy: C with frame pointers, dynamic libc)")
	noStops := fs.Bool("no-stops", false, "leave out macprof record --capture stop")
	noPerf := fs.Bool("no-perf", false, "leave perf out (for a quick look at macprof alone)")
	idle := fs.Bool("idle", false, "also run macprof at each rate beside the workload on a process that sleeps: the sampler's cost before any capture")
	verbose := fs.Bool("v", false, "print every run's throughput")
	before := fs.String("before", "", "also run this macprof binary (built from an earlier commit) at each rate, for a before/after in one run")
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
	var workload []string
	switch *workloadName {
	case "go":
		workload = []string{demo, "-threads", "2", "-duration", dur.String()}
	case "c":
		cbusy, err := buildC(dir)
		if err != nil {
			return err
		}
		workload = []string{cbusy, "2", strconv.FormatFloat(dur.Seconds(), 'f', -1, 64)}
	default:
		return fmt.Errorf("-workload %q: go or c", *workloadName)
	}
	perf, err := exec.LookPath("perf")
	if err != nil && !*noPerf {
		return errors.New("perf not found: apt-get install linux-perf (or pass -no-perf)")
	}
	// Two runs alone per round: the loss of one against the other (the
	// control) is the measurement's own noise, reported beside the tools'.
	configs := []overheadConfig{
		{name: "alone", prefix: func(string) []string { return nil }},
		{name: "alone (control)", prefix: func(string) []string { return nil }},
	}
	hzs := strings.Split(*rates, ",")
	for _, hz := range hzs {
		configs = append(configs, overheadConfig{name: "macprof " + hz + " Hz", prefix: func(dir string) []string {
			return []string{macprof, "record", "-F", hz, "-o", filepath.Join(dir, "p.pb.gz"), "--"}
		}})
		if *before != "" {
			configs = append(configs, overheadConfig{name: "macprof before " + hz + " Hz", prefix: func(dir string) []string {
				return []string{*before, "record", "-F", hz, "-o", filepath.Join(dir, "p.pb.gz"), "--"}
			}})
		}
		if !*noStops {
			configs = append(configs, overheadConfig{name: "macprof stops " + hz + " Hz", prefix: func(dir string) []string {
				return []string{macprof, "record", "--capture", "stop", "-F", hz, "-o", filepath.Join(dir, "p.pb.gz"), "--"}
			}})
		}
		if *idle {
			configs = append(configs, overheadConfig{name: "macprof " + hz + " Hz idle", prefix: func(string) []string { return nil },
				beside: idleSampler(macprof, hz)})
		}
		if !*noPerf {
			configs = append(configs, overheadConfig{name: "perf -g " + hz + " Hz", prefix: func(dir string) []string {
				return []string{perf, "record", "-q", "-g", "-F", hz, "-o", filepath.Join(dir, "perf.data"), "--"}
			}})
		}
	}
	runs := make([][]demoRun, len(configs)) // runs[config][round]
	loadBefore := loadAverage()
	for r := 0; r < *rounds; r++ {
		for k := range configs {
			c := (k + r) % len(configs)
			var stop func()
			if configs[c].beside != nil {
				if stop, err = configs[c].beside(dir, *dur); err != nil {
					return err
				}
			}
			v, err := runDemo(configs[c].prefix(dir), workload)
			if stop != nil {
				stop()
			}
			if err != nil {
				return err
			}
			runs[c] = append(runs[c], v)
		}
		fmt.Fprintf(os.Stderr, "round %d/%d done, load %s\n", r+1, *rounds, loadAverage())
	}
	loadAfter := loadAverage()
	fmt.Printf("%s workload, 2 busy threads on %d CPUs, %v per run, %d rounds (each runs every configuration once, order rotated)\n",
		*workloadName, runtime.NumCPU(), *dur, *rounds)
	fmt.Printf("  load average (1, 5, 15 min) before: %s; after: %s\n", loadBefore, loadAfter)
	var steals []float64
	for _, rs := range runs {
		for _, r := range rs {
			steals = append(steals, 100*r.steal)
		}
	}
	_, stealMed, stealQ3 := quartiles(steals)
	fmt.Printf("  hypervisor steal during the runs: median %.1f%%, third quartile %.1f%% of the machine's CPU time\n", stealMed, stealQ3)
	fmt.Printf("  alone: median %.1f units/s\n", medianF(throughputs(runs[0])))
	if *verbose {
		for c := range configs {
			fmt.Printf("  %-20s", configs[c].name)
			for _, r := range runs[c] {
				fmt.Printf(" %8.1f", r.throughput)
			}
			fmt.Println()
		}
	}
	fmt.Printf("  throughput loss = 1 - throughput / the same round's first run alone; median [interquartile range], mean ± 95%% CI\n")
	for c := 1; c < len(configs); c++ {
		losses := make([]float64, *rounds)
		for r := range losses {
			losses[r] = 100 * (1 - runs[c][r].throughput/runs[0][r].throughput)
		}
		q1, med, q3 := quartiles(losses)
		mean, ci := meanCI(losses)
		fmt.Printf("  %-20s loss %6.2f%% [%.2f, %.2f]   mean %6.2f%% ± %.2f", configs[c].name, med, q1, q3, mean, ci)
		if cpu := profilerCPUShare(runs[c]); cpu > 0 {
			// With every CPU kept busy by the workload, what macprof
			// uses is taken from it: its share of the machine bounds the
			// loss from below.
			fmt.Printf("   profiler CPU %.2f%% of a core (%.2f%% of the machine), stops p50 %v p99 %v",
				cpu, cpu/float64(runtime.NumCPU()),
				medianD(stops(runs[c], false)).Round(time.Microsecond), medianD(stops(runs[c], true)).Round(time.Microsecond))
		}
		fmt.Println()
	}
	// Every profiler's CPU time over the whole run, from the kernel's
	// accounting of the processes rather than the profiler's own report.
	if runs[0][0].wholeCPU >= 0 {
		fmt.Printf("  profiler CPU, whole run = CPU time of the command (profiler and the processes it waited for) - the demo's own; median [IQR], %% of one core over %v\n", *dur)
		eachConfig(configs, runs, func(r demoRun) time.Duration { return r.wholeCPU }, func(name string, q1, med, q3 time.Duration) {
			share := func(d time.Duration) float64 { return 100 * d.Seconds() / dur.Seconds() }
			fmt.Printf("  %-20s profiler CPU %5.2f%% [%.2f, %.2f] of a core (%.0f ms a run)\n", name, share(med), share(q1), share(q3), float64(med)/float64(time.Millisecond))
		})
	}
	// What each profiler used while the workers ran: all it can take
	// from them (its start before the command and its work after are
	// not).
	if runs[0][0].runCPU >= 0 {
		fmt.Printf("  profiler CPU while the workers ran (the demo reads its parent's); median [IQR] over %v\n", *dur)
		eachConfig(configs, runs, func(r demoRun) time.Duration { return r.runCPU }, func(name string, q1, med, q3 time.Duration) {
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			fmt.Printf("  %-20s %6.2f ms [%.2f, %.2f]\n", name, ms(med), ms(q1), ms(q3))
		})
	}
	if runs[0][0].ran == 0 {
		return nil
	}
	// The work's speed varies from run to run on a shared machine far more
	// than a profiler takes; the time the workers spent on a CPU does not.
	// What a profiler takes (its own CPU on a machine the workload keeps
	// busy, the time it holds threads stopped) shows there precisely; a
	// slowdown of the work itself (caches a profiler's stops disturb) does
	// not, and the throughput loss above bounds that.
	fmt.Printf("  run-time loss = 1 - share of their time the workers were on a CPU / the same in the round's first run alone;\n")
	fmt.Printf("  user-time loss: the same for their time in user mode (a stop's kernel work on the workload's side counts as lost)\n")
	for c := 1; c < len(configs); c++ {
		ran, user := make([]float64, *rounds), make([]float64, *rounds)
		for r := range ran {
			ran[r] = 100 * (1 - runs[c][r].ran/runs[0][r].ran)
			user[r] = 100 * (1 - runs[c][r].user/runs[0][r].user)
		}
		q1, med, q3 := quartiles(ran)
		mean, ci := meanCI(ran)
		uq1, umed, uq3 := quartiles(user)
		fmt.Printf("  %-20s run-time loss %5.2f%% [%.2f, %.2f] mean %5.2f%% ± %.2f   user-time loss %5.2f%% [%.2f, %.2f]\n",
			configs[c].name, med, q1, q3, mean, ci, umed, uq1, uq3)
	}
	return nil
}

// eachConfig calls show with the quartiles of a CPU time of each
// configuration's runs (those that report it: value at or above 0), but for
// configurations that run beside the workload.
func eachConfig(configs []overheadConfig, runs [][]demoRun, value func(demoRun) time.Duration, show func(name string, q1, med, q3 time.Duration)) {
	for c := range configs {
		var v []float64
		for _, r := range runs[c] {
			if d := value(r); d >= 0 {
				v = append(v, float64(d))
			}
		}
		if len(v) == 0 || configs[c].beside != nil {
			continue
		}
		q1, med, q3 := quartiles(v)
		show(configs[c].name, time.Duration(q1), time.Duration(med), time.Duration(q3))
	}
}

func throughputs(rs []demoRun) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.throughput
	}
	return out
}

func stops(rs []demoRun, p99 bool) []time.Duration {
	var out []time.Duration
	for _, r := range rs {
		if p99 {
			out = append(out, r.stopP99)
		} else {
			out = append(out, r.stopP50)
		}
	}
	return out
}

// profilerCPUShare is the median of macprof's CPU time over the recording's
// length, in percent of one core; 0 when the runs did not report it.
func profilerCPUShare(rs []demoRun) float64 {
	var shares []float64
	for _, r := range rs {
		if r.profilerCPU > 0 && r.wall > 0 {
			shares = append(shares, 100*r.profilerCPU.Seconds()/r.wall.Seconds())
		}
	}
	if len(shares) == 0 {
		return 0
	}
	return medianF(shares)
}

func medianF(v []float64) float64 {
	_, m, _ := quartiles(v)
	return m
}

func medianD(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return median(ds)
}
