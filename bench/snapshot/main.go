// Command snapshot measures `macprof snapshot -p PID` against `eu-stack -p
// PID` on the same running processes, interleaved: an idle 7-thread
// process (internal/testprog/src/idle.c), a busy 4-thread one and one of
// 64 busy threads (deep.c). Each round runs both tools once on each target,
// the order of the two swapped from round to round; it reports the median
// wall time, CPU time and peak RSS (the children's rusage) of each and
// the ratios macprof / eu-stack. With -lines it also compares
// `macprof snapshot --lines` with `eu-stack -s -i` (file:line and inlined
// calls), and with -lean bench/snapshot/lean, the same snapshot built
// without the rest of macprof, with eu-stack (what the start-up of the
// whole binary costs).
//
// Usage (from the repository root, as root or with ptrace permission):
//
//	go run ./bench/snapshot [-rounds 5] [-targets idle7,busy4,busy64] [-lines] [-lean]
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
	lines := flag.Bool("lines", false, "also compare macprof snapshot --lines with eu-stack -s -i")
	lean := flag.Bool("lean", false, "also compare bench/snapshot/lean (the snapshot without the rest of macprof) with eu-stack")
	flag.Parse()
	if err := run(*rounds, strings.Split(*targets, ","), *lines, *lean); err != nil {
		fmt.Fprintln(os.Stderr, "snapshot bench:", err)
		os.Exit(1)
	}
}

// target is a process to snapshot: a program and its arguments.
type target struct {
	name string
	src  string
	args []string
}

var allTargets = map[string]target{
	"idle7":  {"idle, 7 threads", "idle.c", []string{"7"}},
	"busy4":  {"busy, 4 threads", "deep.c", []string{"4", "10"}},
	"busy64": {"busy, 64 threads", "deep.c", []string{"64", "10"}},
}

// usage is one run of a tool.
type usage struct {
	wall, cpu time.Duration
	rssKB     int64
}

// tool is one command line to time; PID is appended.
type tool struct {
	name string
	args []string
}

func run(rounds int, names []string, lines, lean bool) error {
	dir, err := os.MkdirTemp("", "macprof-snapshot-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	macprof := filepath.Join(dir, "macprof")
	if out, err := exec.Command("go", "build", "-o", macprof, "./cmd/macprof").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	eu, err := exec.LookPath("eu-stack")
	if err != nil {
		return errors.New("eu-stack not found: apt-get install elfutils")
	}
	pairs := [][2]tool{{{"macprof snapshot", []string{macprof, "snapshot", "-p"}}, {"eu-stack", []string{eu, "-p"}}}}
	if lean {
		bin := filepath.Join(dir, "lean")
		if out, err := exec.Command("go", "build", "-o", bin, "./bench/snapshot/lean").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
		pairs = append(pairs, [2]tool{{"lean (snapshot alone)", []string{bin}}, {"eu-stack", []string{eu, "-p"}}})
	}
	if lines {
		pairs = append(pairs, [2]tool{{"macprof snapshot --lines", []string{macprof, "snapshot", "--lines", "-p"}}, {"eu-stack -s -i", []string{eu, "-s", "-i", "-p"}}})
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
		p, err := ready.Start(bin, tg.args...)
		if err != nil {
			return err
		}
		pid := strconv.Itoa(p.Process.Pid)
		for _, pair := range pairs {
			var runs [2][]usage
			for r := 0; r < rounds; r++ {
				for k := range 2 {
					i := k ^ r%2 // swap the order every round
					u, err := timeRun(append(slices.Clone(pair[i].args), pid))
					if err != nil {
						p.Process.Kill()
						p.Wait()
						return err
					}
					runs[i] = append(runs[i], u)
				}
			}
			m, e := medians(runs[0]), medians(runs[1])
			fmt.Printf("%-17s %-26s wall %8v  CPU %8v  RSS %6.1f MB\n", tg.name, pair[0].name, m.wall.Round(time.Millisecond/10), m.cpu.Round(time.Millisecond/10), float64(m.rssKB)/1024)
			fmt.Printf("%-17s %-26s wall %8v  CPU %8v  RSS %6.1f MB\n", "", pair[1].name, e.wall.Round(time.Millisecond/10), e.cpu.Round(time.Millisecond/10), float64(e.rssKB)/1024)
			fmt.Printf("%-17s %-26s wall %.2fx  CPU %.2fx  RSS %.2fx  (median of %d interleaved rounds)\n", "", "ratio", ratio(m.wall, e.wall), ratio(m.cpu, e.cpu), float64(m.rssKB)/float64(e.rssKB), rounds)
		}
		p.Process.Kill()
		p.Wait()
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
	return usage{wall: wall, cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rssKB: ru.Maxrss}, nil
}

// medians returns the median of each measure on its own.
func medians(us []usage) usage {
	var w, c []time.Duration
	var r []int64
	for _, u := range us {
		w, c, r = append(w, u.wall), append(c, u.cpu), append(r, u.rssKB)
	}
	slices.Sort(w)
	slices.Sort(c)
	slices.Sort(r)
	n := len(us) / 2
	return usage{wall: w[n], cpu: c[n], rssKB: r[n]}
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
