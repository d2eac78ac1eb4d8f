// Command snapshot measures `macprof snapshot -p PID` against `eu-stack -p
// PID` on the same running processes, interleaved: an idle 7-thread
// process (internal/testprog/src/idle.c), a busy 4-thread one and one of
// 64 busy threads (deep.c). Each round runs every tool once on each
// target, the order rotated from round to round; it reports the median
// wall time, CPU time and peak RSS (the children's rusage) of each and the
// ratios to eu-stack measured in the same rounds, and the median minor page
// faults and context switches (counts the machine's load does not change). Optional tools:
// -lines compares `macprof snapshot --lines` with `eu-stack -s -i` (file:line
// and inlined calls); -lean runs bench/snapshot/lean, the same snapshot
// built without the rest of macprof; -base REV runs
// macprof built at git revision REV (a before/after comparison in the
// same conditions); -floor adds what no snapshot can take less than here:
// a Go hello world and `macprof --version` (a Go program's start and exit,
// and macprof's, package inits included). -fifo N runs the bench itself, and so the tools and
// the idle target it starts, at SCHED_FIFO priority N once the tools are
// built, so that other work on a shared machine does not reach them; a
// busy target is started at normal priority (its spinning threads would
// hold both CPUs against every other process).
//
// Usage (from the repository root, as root or with ptrace permission):
//
//	go run ./bench/snapshot [-rounds 5] [-targets idle7,busy4,busy64] [-lines] [-lean] [-floor] [-base REV] [-fifo N]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/macprof/macprof/bench/internal/ready"
)

func main() {
	rounds := flag.Int("rounds", 5, "interleaved rounds (at least 5 for the medians reported)")
	targets := flag.String("targets", "idle7,busy4,busy64", "targets to measure, comma-separated: idle7, busy4, busy64")
	var o options
	flag.BoolVar(&o.lines, "lines", false, "also compare macprof snapshot --lines with eu-stack -s -i")
	flag.BoolVar(&o.lean, "lean", false, "also run bench/snapshot/lean (the snapshot without the rest of macprof)")
	flag.BoolVar(&o.floor, "floor", false, "also run a Go hello world and macprof --version (start and exit only)")
	flag.StringVar(&o.base, "base", "", "also run macprof built at git revision `REV`")
	flag.IntVar(&o.fifo, "fifo", 0, "once built, run the tools and the idle target at SCHED_FIFO `priority` (chrt); 0: as started")
	flag.Parse()
	if err := run(*rounds, strings.Split(*targets, ","), o); err != nil {
		fmt.Fprintln(os.Stderr, "snapshot bench:", err)
		os.Exit(1)
	}
}

// options are the tools measured besides macprof snapshot and eu-stack.
type options struct {
	lines, lean bool
	floor       bool
	base        string
	fifo        int // SCHED_FIFO priority of the tools and idle targets, 0 for none
}

// target is a process to snapshot: a program and its arguments, and
// whether its threads spin.
type target struct {
	name string
	src  string
	args []string
	busy bool
}

var allTargets = map[string]target{
	"idle7":  {"idle, 7 threads", "idle.c", []string{"7"}, false},
	"busy4":  {"busy, 4 threads", "deep.c", []string{"4", "10"}, true},
	"busy64": {"busy, 64 threads", "deep.c", []string{"64", "10"}, true},
}

// usage is one run of a tool.
type usage struct {
	wall, cpu time.Duration
	rssKB     int64
	faults    int64 // minor page faults
	switches  int64 // voluntary and involuntary context switches
}

// tool is one command line to time (PID is appended unless noPID) and
// the tool its ratios are taken against ("" for a reference).
type tool struct {
	name  string
	args  []string
	ref   string
	noPID bool
}

// helloGo is the Go hello world of -floor.
const helloGo = `package main

import "os"

func main() { os.Stdout.WriteString("hello\n") }
`

// build runs go build with args, the output last, in dir.
func build(dir string, args ...string) error {
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// tools builds what o asks for in dir and returns the command lines.
func tools(dir string, o options) ([]tool, error) {
	eu, err := exec.LookPath("eu-stack")
	if err != nil {
		return nil, errors.New("eu-stack not found: apt-get install elfutils")
	}
	macprof := filepath.Join(dir, "macprof")
	if err := build(".", "-o", macprof, "./cmd/macprof"); err != nil {
		return nil, err
	}
	ts := []tool{{"eu-stack", []string{eu, "-p"}, "", false}, {"macprof snapshot", []string{macprof, "snapshot", "-p"}, "eu-stack", false}}
	if o.base != "" {
		src := filepath.Join(dir, "base")
		if err := os.Mkdir(src, 0o755); err != nil {
			return nil, err
		}
		// git archive, not a checkout: the working tree stays as it is.
		if out, err := exec.Command("sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", o.base, src).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("git archive %s: %v\n%s", o.base, err, out)
		}
		bin := filepath.Join(dir, "macprof-base")
		if err := build(src, "-o", bin, "./cmd/macprof"); err != nil {
			return nil, err
		}
		ts = append(ts, tool{"macprof snapshot @" + o.base, []string{bin, "snapshot", "-p"}, "eu-stack", false})
	}
	if o.lean {
		bin := filepath.Join(dir, "lean")
		if err := build(".", "-o", bin, "./bench/snapshot/lean"); err != nil {
			return nil, err
		}
		ts = append(ts, tool{"lean (snapshot alone)", []string{bin}, "eu-stack", false})
	}
	if o.floor {
		src := filepath.Join(dir, "hello.go")
		if err := os.WriteFile(src, []byte(helloGo), 0o644); err != nil {
			return nil, err
		}
		bin := filepath.Join(dir, "hello")
		if err := build(dir, "-o", bin, src); err != nil {
			return nil, err
		}
		ts = append(ts, tool{"Go hello world", []string{bin}, "eu-stack", true},
			tool{"macprof --version", []string{macprof, "--version"}, "eu-stack", true})
	}
	if o.lines {
		ts = append(ts, tool{"eu-stack -s -i", []string{eu, "-s", "-i", "-p"}, "", false},
			tool{"macprof snapshot --lines", []string{macprof, "snapshot", "--lines", "-p"}, "eu-stack -s -i", false})
	}
	return ts, nil
}

func run(rounds int, names []string, o options) error {
	dir, err := os.MkdirTemp("", "macprof-snapshot-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ts, err := tools(dir, o)
	if err != nil {
		return err
	}
	fmt.Printf("%s, %s, load average %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), machine(), loadavg())
	for _, n := range names {
		tg, ok := allTargets[n]
		if !ok {
			return fmt.Errorf("unknown target %q", n)
		}
		bin := filepath.Join(dir, strings.TrimSuffix(tg.src, ".c"))
		if _, err := os.Stat(bin); err != nil {
			src := filepath.Join("internal/testprog/src", tg.src)
			if out, err := exec.Command("gcc", "-O2", "-pthread", "-fno-omit-frame-pointer", "-o", bin, src).CombinedOutput(); err != nil {
				return fmt.Errorf("gcc %s: %v\n%s", src, err, out)
			}
		}
	}
	if o.fifo > 0 {
		// Every thread of the bench, so that whichever starts a tool
		// passes the priority on.
		if out, err := exec.Command("chrt", "-a", "-f", "-p", strconv.Itoa(o.fifo), strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
			return fmt.Errorf("-fifo: chrt: %v\n%s", err, out)
		}
		fmt.Printf("tools and idle targets at SCHED_FIFO priority %d\n", o.fifo)
	}
	for _, n := range names {
		tg := allTargets[n]
		bin := filepath.Join(dir, strings.TrimSuffix(tg.src, ".c"))
		start := append([]string{bin}, tg.args...)
		if tg.busy && o.fifo > 0 {
			start = append([]string{"chrt", "-o", "0"}, start...)
		}
		p, err := ready.Start(start[0], start[1:]...)
		if err != nil {
			return err
		}
		pid := strconv.Itoa(p.Process.Pid)
		runs := make([][]usage, len(ts))
		for r := 0; r < rounds; r++ {
			for k := range ts {
				i := (k + r) % len(ts) // rotate the order every round
				args := slices.Clone(ts[i].args)
				if !ts[i].noPID {
					args = append(args, pid)
				}
				u, err := timeRun(args)
				if err != nil {
					p.Process.Kill()
					p.Wait()
					return err
				}
				runs[i] = append(runs[i], u)
			}
		}
		p.Process.Kill()
		p.Wait()
		med := make(map[string]usage, len(ts))
		for i, t := range ts {
			med[t.name] = medians(runs[i])
		}
		fmt.Printf("%s (median of %d interleaved rounds)\n", tg.name, rounds)
		for _, t := range ts {
			m := med[t.name]
			fmt.Printf("  %-36s wall %8v  CPU %8v  RSS %6.1f MB  faults %5d  switches %4d", t.name, m.wall.Round(time.Millisecond/10), m.cpu.Round(time.Millisecond/10), float64(m.rssKB)/1024, m.faults, m.switches)
			if e, ok := med[t.ref]; ok {
				fmt.Printf("  vs %s: wall %.2fx  CPU %.2fx  RSS %.2fx", t.ref, ratio(m.wall, e.wall), ratio(m.cpu, e.cpu), float64(m.rssKB)/float64(e.rssKB))
			}
			fmt.Println()
		}
	}
	fmt.Printf("load average after: %s\n", loadavg())
	return nil
}

// timeRun runs a command to its end and returns its wall time, CPU time and
// peak RSS. eu-stack exits 1 when some frame could not be unwound, and
// macprof snapshot when a thread did not stop in time: both are still
// runs.
func timeRun(args []string) (usage, error) {
	cmd := exec.Command(args[0], args[1:]...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return usage{}, fmt.Errorf("%s: %v\n%.500s", strings.Join(args, " "), err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return usage{}, errors.New("no rusage")
	}
	return usage{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rssKB: ru.Maxrss,
		faults: ru.Minflt, switches: ru.Nvcsw + ru.Nivcsw}, nil
}

// medians returns the median of each measure on its own.
func medians(us []usage) usage {
	var w, c []time.Duration
	var r, f, s []int64
	for _, u := range us {
		w, c, r = append(w, u.wall), append(c, u.cpu), append(r, u.rssKB)
		f, s = append(f, u.faults), append(s, u.switches)
	}
	for _, v := range [][]int64{r, f, s} {
		slices.Sort(v)
	}
	slices.Sort(w)
	slices.Sort(c)
	n := len(us) / 2
	return usage{wall: w[n], cpu: c[n], rssKB: r[n], faults: f[n], switches: s[n]}
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

// machine says what the figures were measured on.
func machine() string {
	model := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	n := 0
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		n = strings.Count(string(b), "processor\t:")
	}
	return fmt.Sprintf("%d CPUs (%s)", n, model)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
