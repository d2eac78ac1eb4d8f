package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/sampler"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
)

func init() {
	register(command{name: "record", summary: "sample a process (or a command) and write pprof, folded stacks or a flame graph", run: runRecord})
}

const recordHelp = `
Samples every thread of a running process (-p PID), or of a command macprof
starts (after --), at a fixed rate, and writes what it saw when the time is
up, the target exits, or you press Ctrl-C. Each -o names one output; the
format follows the extension:

  .pb.gz, .pprof   pprof profile: go tool pprof -top FILE, or Grafana Pyroscope
  .folded, .txt    folded stacks (flamegraph.pl, speedscope, inferno)
  .svg             a self-contained flame graph: open it in a browser

Modes: cpu (default) counts only threads that ran since the last tick, so a
profile shows where CPU time goes; idle threads are not even stopped. wall
counts every thread on every tick (an idle thread's last stack again), so a
profile shows where threads wait too.

Rate: 99 Hz by default; 999 Hz gives ten times the detail.

Capture (Linux): in cpu mode the kernel samples each thread (perf_event:
every period of its CPU time it copies the thread's registers and the top
of its stack, in the thread's own timer interrupt, into a buffer), so no
thread is stopped; macprof collects the samples ten times a second (every
ten periods at rates above 100 Hz) rather than waking at the sampling rate.
Each sample copies 8 KiB of stack, then 16 and 32 KiB for a thread whose
stacks go deeper (where locked memory is not budgeted: root); deeper stacks
end there, marked truncated. Where the kernel does not allow kernel
samples (perf_event_paranoid, the locked-memory budget for its buffers),
or with --capture stop, and in wall mode, each sample stops the thread for
about 60 µs (ptrace); a thread that does not stop within 50 ms (an
uninterruptible sleep) is skipped and counted as missed. Idle threads are
never stopped in cpu mode. Measured on the project's 2-CPU test machine
with two busy threads, and the figures for each way in bench/RESULTS.md.

A launched command runs as the invoking user even under sudo; the processes
it starts are followed (each is its own set of mappings, with a pid label),
and macprof exits with the command's exit status.

Examples:
  macprof record -p 1234 -d 30s -o cpu.pb.gz
  macprof record -F 999 -o flame.svg -o stacks.folded -- ./mybenchmark -n 10
  macprof record --mode wall -d 10s -p 1234 -o wall.pb.gz
`

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

type output struct {
	path   string
	format exporter.Format
}

func runRecord(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("record", "macprof record [-p PID | -- CMD ARGS...] [-F HZ] [-d DURATION] [--mode cpu|wall] -o FILE [-o FILE...]", recordHelp, stderr)
	pid := fs.Int("p", 0, "`PID` of a running process to record")
	hz := fs.Int("F", sampler.DefaultHz, "sampling rate in `HZ` per thread")
	dur := fs.Duration("d", 0, "stop after `DURATION` (e.g. 30s); 0 records until the target exits or Ctrl-C")
	mode := fs.String("mode", "cpu", "`MODE`: cpu (threads that ran) or wall (every thread)")
	capture := fs.String("capture", "auto", "`HOW` threads are captured in cpu mode on Linux: auto (kernel samples where allowed, else stops) or stop (ptrace stops only)")
	format := fs.String("format", "", "`FORMAT` for every -o (pprof, folded, svg) instead of the extension")
	maxFrames := fs.Int("max-frames", 512, "stop each stack walk after `N` frames")
	quiet := fs.Bool("q", false, "no status line and no summary")
	var outs multiFlag
	fs.Var(&outs, "o", "write the profile to `FILE` (repeatable)")
	if st, ok := parseFlags(fs, args); !ok {
		return st
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "macprof record: "+format+"\n", a...)
		return 2
	}
	cmdArgs := fs.Args()
	switch {
	case *pid == 0 && len(cmdArgs) == 0:
		return fail("give a process (-p PID) or a command to run (-- CMD ARGS...)")
	case *pid != 0 && len(cmdArgs) > 0:
		return fail("give either -p PID or a command, not both")
	case len(outs) == 0:
		return fail("give at least one output with -o FILE (e.g. -o cpu.pb.gz or -o flame.svg)")
	}
	var m profile.Mode
	switch *mode {
	case "cpu":
		m = profile.ModeCPU
	case "wall":
		m = profile.ModeWall
	default:
		return fail("--mode must be cpu or wall, not %q", *mode)
	}
	if *capture != "auto" && *capture != "stop" {
		return fail("--capture must be auto or stop, not %q", *capture)
	}
	if *hz < 1 || *hz > sampler.MaxHz {
		return fail("-F must be between 1 and %d Hz", sampler.MaxHz)
	}
	// Every output is checked before sampling starts, not after.
	var outputs []output
	for _, o := range outs {
		var f exporter.Format
		var err error
		if *format != "" {
			f, err = exporter.ParseFormat(*format)
		} else {
			f, err = exporter.FormatForPath(o)
		}
		if err != nil {
			return fail("%v", err)
		}
		if err := exporter.CheckWritable(o); err != nil {
			return fail("cannot write %s: %v", o, err)
		}
		outputs = append(outputs, output{path: o, format: f})
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
		defer cancel()
	}

	var windows []*profile.Window
	status := newStatusLine(stderr, *quiet)
	opts := target.Options{MaxFrames: *maxFrames, Continuous: true}
	if m == profile.ModeCPU && *capture == "auto" {
		opts.KernelSamplePeriod = time.Second / time.Duration(*hz)
	}
	rec := &recording{opts: opts}
	s, err := sampler.New(sampler.Config{
		Hz:        *hz,
		Mode:      m,
		MaxFrames: *maxFrames,
		OnWindow:  func(w *profile.Window) { windows = append(windows, w) },
		// Children are looked for between ticks, on the sampler's own
		// goroutine: a goroutine of their own would wake the process ten
		// more times a second.
		OnTick: func(p sampler.Progress) {
			status.update(p)
			rec.followChildren(p.Elapsed)
		},
	})
	if err != nil {
		return fail("%v", err)
	}
	rec.s = s
	var waitChild func() int
	if len(cmdArgs) > 0 {
		t, err := launch(cmdArgs, opts)
		if err != nil {
			fmt.Fprintf(stderr, "macprof record: %v\n", err)
			return 1
		}
		waitChild = t.Wait
		rec.add(t, true)
		rec.root = t
	} else if err := rec.attach(*pid, false); err != nil {
		fmt.Fprintf(stderr, "macprof record: %v\n", err)
		return 1
	}
	restore := tuneForSampling()
	runErr := s.Run(ctx)
	restore()
	status.done()
	sampleErr, sampleWarn := rec.kernelSampleNotes()
	rec.closeAll()
	if runErr != nil && !errors.Is(runErr, sampler.ErrAllExited) {
		fmt.Fprintf(stderr, "macprof record: %v\n", runErr)
	}

	// Merge windows (record makes one) and write every output.
	w := profile.Merge(windows)
	cache := symcache.New(symcache.Options{})
	status.printSummary(w, s.Period())
	if sampleErr != nil && !*quiet {
		fmt.Fprintf(stderr, "macprof: some threads were stopped for their samples, as kernel samples were refused: %v\n", sampleErr)
	}
	if sampleWarn != nil && !*quiet {
		fmt.Fprintf(stderr, "macprof: %v\n", sampleWarn)
	}
	failed := false
	for _, o := range outputs {
		if err := exporter.WriteFile(o.path, o.format, w, cache, exporter.Options{ThreadRoot: false}); err != nil {
			fmt.Fprintf(stderr, "macprof record: write %s: %v\n", o.path, err)
			failed = true
			continue
		}
		if !*quiet {
			fmt.Fprintf(stderr, "macprof: wrote %s (%s)\n", o.path, o.format)
		}
	}
	code := 0
	if failed {
		code = 1
	}
	if waitChild != nil {
		if st := waitChild(); st != 0 {
			return st
		}
	}
	return code
}

// recording holds the targets of one record run.
type recording struct {
	s    *sampler.Sampler
	opts target.Options
	mu   sync.Mutex
	ts   []target.Target
	pids map[int]bool

	// Following a launched command's children (sampler goroutine only).
	root   target.Target // the launched command; nil when attached with -p or once it exited
	tree   processTree   // finds its descendants
	kids   []int         // the last list of them
	failed map[int]bool  // descendants that could not be attached
	polled time.Duration // recording time of the last look
}

// attach attaches to pid and adds it; started says it started during the
// recording (a descendant of the launched command), so that all of its CPU
// time is counted.
func (r *recording) attach(pid int, started bool) error {
	t, err := attach(pid, r.opts)
	if err != nil {
		return err
	}
	r.add(t, started)
	return nil
}

func (r *recording) add(t target.Target, started bool) {
	r.mu.Lock()
	if r.pids == nil {
		r.pids = map[int]bool{}
	}
	r.ts = append(r.ts, t)
	r.pids[t.PID()] = true
	r.mu.Unlock()
	if started {
		r.s.AddStarted(t)
	} else {
		r.s.Add(t)
	}
}

func (r *recording) attached(pid int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pids[pid]
}

// childPollInterval is how often record looks for new descendants of a
// launched command.
const childPollInterval = 100 * time.Millisecond

// followChildren attaches to new descendants of the launched command, at
// most once per childPollInterval of recording time. It runs after a tick,
// on the sampler's goroutine.
func (r *recording) followChildren(elapsed time.Duration) {
	// (Ticks may come a little early: a tick that comes just short of
	// the interval must not wait for the next one.)
	if r.root == nil || elapsed-r.polled < childPollInterval*9/10 {
		return
	}
	r.polled = elapsed
	if e, ok := r.root.(target.ExitReporter); ok && e.Exited() {
		// Its PID may be reused by an unrelated process: stop here.
		r.root = nil
		return
	}
	r.kids = r.tree.Descendants(r.root.PID(), r.kids)
	for _, pid := range r.kids {
		if r.attached(pid) || r.failed[pid] {
			continue
		}
		// A child that exits meanwhile is simply missed; one that cannot
		// be attached (a zombie, a set-user-ID program) is not tried again.
		if err := r.attach(pid, true); err != nil && len(r.failed) < maxFailedChildren {
			if r.failed == nil {
				r.failed = map[int]bool{}
			}
			r.failed[pid] = true
		}
	}
}

// maxFailedChildren bounds the set of children record gave up on.
const maxFailedChildren = 4096

// kernelSampleNotes returns, for the first target that reports each, why
// a target could not capture some thread from kernel samples (it stopped
// the thread instead), and why it kept some thread's samples in a smaller
// buffer than asked.
func (r *recording) kernelSampleNotes() (refused, reduced error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.ts {
		if k, ok := t.(target.KernelSampleReporter); ok {
			if refused == nil {
				refused = k.KernelSampleError()
			}
			if reduced == nil {
				reduced = k.KernelSampleWarning()
			}
		}
	}
	return refused, reduced
}

func (r *recording) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.ts {
		t.Close()
	}
}

// statusLine shows progress on one terminal line.
type statusLine struct {
	w     io.Writer
	tty   bool
	quiet bool
	last  time.Time
	shown bool
}

func newStatusLine(w io.Writer, quiet bool) *statusLine {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &statusLine{w: w, tty: tty, quiet: quiet}
}

func (s *statusLine) update(p sampler.Progress) {
	if !s.tty || s.quiet || time.Since(s.last) < 250*time.Millisecond {
		return
	}
	s.last = time.Now()
	s.shown = true
	fmt.Fprintf(s.w, "\r\x1b[Krecording: %s, %d samples, %d threads in %d process(es) (Ctrl-C to stop)",
		p.Elapsed.Round(time.Second), p.Samples, p.Threads, p.Targets)
}

func (s *statusLine) done() {
	if s.shown {
		fmt.Fprint(s.w, "\r\x1b[K")
	}
}

func (s *statusLine) printSummary(w *profile.Window, period time.Duration) {
	if s.quiet {
		return
	}
	var samples int64
	for _, sm := range w.Samples {
		samples += sm.Count
	}
	st := w.Stats
	fmt.Fprintf(s.w, "macprof: %d samples over %s at %d Hz, %d stacks, %d captures\n",
		samples, w.End.Sub(w.Start).Round(time.Millisecond), int(time.Second/period), len(w.Stacks), st.Captures)
	fmt.Fprintf(s.w, "macprof: threads stopped per capture: p50 %s, p99 %s, max %s; profiler CPU %s\n",
		st.StoppedP50.Round(time.Microsecond), st.StoppedP99.Round(time.Microsecond), st.StoppedMax.Round(time.Microsecond), st.ProfilerCPU.Round(time.Millisecond))
	for k, v := range w.Missed {
		fmt.Fprintf(s.w, "macprof: missed %d: %s\n", v, k)
	}
}
