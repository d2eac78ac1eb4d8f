// Package record runs a recording: it launches a command or attaches to a
// process, samples it (and the processes a launched command starts) until
// the time is up or it exits, then writes the profile to each output and a
// summary of the run.
package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/sampler"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// Output is one file to write the profile to.
type Output struct {
	Path   string
	Format exporter.Format
}

// ParseOutputs returns the outputs for paths, each in format (pprof,
// folded, svg) or, when format is empty, in the format its extension names.
// Every path is checked for writing now, so that a mistake fails before
// sampling rather than after.
func ParseOutputs(paths []string, format string) ([]Output, error) {
	if len(paths) == 0 {
		return nil, errors.New("give at least one output with -o FILE (e.g. -o cpu.pb.gz or -o flame.svg)")
	}
	var outputs []Output
	for _, o := range paths {
		var f exporter.Format
		var err error
		if format != "" {
			f, err = exporter.ParseFormat(format)
		} else {
			f, err = exporter.FormatForPath(o)
		}
		if err != nil {
			return nil, err
		}
		if err := exporter.CheckWritable(o); err != nil {
			return nil, fmt.Errorf("cannot write %s: %v", o, err)
		}
		outputs = append(outputs, Output{Path: o, Format: f})
	}
	return outputs, nil
}

// Config configures a recording. The OS backend comes in as functions, so
// that the recording itself is portable.
type Config struct {
	// PID is the process to attach to, when Command is empty.
	PID int
	// Command is the command to launch and record, with its arguments.
	Command []string
	// Hz is the sampling rate per thread, 1 to sampler.MaxHz.
	Hz   int
	Mode profile.Mode
	// StopThreads captures threads only by stopping them (--capture stop),
	// never from kernel samples.
	StopThreads bool
	MaxFrames   int
	// KernelStackBytes is the largest stack copy a kernel sample takes
	// (--stack-bytes; 0: target.DefaultKernelStackBytes).
	KernelStackBytes int
	// Unwind is how stacks are walked (--unwind; default auto: unwind
	// tables where objects have them, frame pointers elsewhere).
	Unwind  unwind.Method
	Outputs []Output
	// Duration, when positive, ends the recording after that long.
	Duration time.Duration
	// Quiet leaves out the status line, the summary and the notes.
	Quiet bool
	// AppOnly, when set, keeps only the frames of the program's own
	// images in every output (--app-only, --app-images).
	AppOnly *exporter.AppFilter
	// Stderr receives the status line, the summary and every message.
	Stderr io.Writer

	// Attach opens the OS backend for a running process.
	Attach func(pid int, o target.Options) (target.Target, error)
	// Launch starts a command and attaches to it.
	Launch func(args []string, o target.Options) (target.Launched, error)
	// Descendants returns a function that appends the PIDs of a process's
	// living descendants to dst[:0], so that a launched command's
	// descendants are recorded too; nil follows none.
	Descendants func() func(root int, dst []int) []int
	// Settled, when set, returns what tells the sampler that no process
	// or thread was created on the system since it last asked
	// (sampler.Config.Settled); nil keeps drains at their usual ceiling.
	Settled func() func() bool
	// WatchExit, when set, calls f when process pid exits, so that the
	// end of a target is not waited for until the next drain; nil finds
	// it at the next tick.
	WatchExit func(pid int, f func()) (stop func(), err error)
	// FromTerminal, when set, reports whether a signal reached a launched
	// command from its terminal already (a Ctrl-C), so that it is not
	// sent a second time; nil: every signal is passed on.
	FromTerminal func(pid int, sig os.Signal) bool
	// Prepare, when set, prepares macprof's own process for sampling
	// before the target starts or is attached to, and returns what undoes
	// it once sampling ends.
	Prepare func() (restore func())
	// Tune, when set, prepares macprof's own process for sampling once the
	// target runs, and returns what undoes it.
	Tune func() (restore func())
	// Signals delivers the signals that end the recording (see Run).
	Signals <-chan os.Signal
}

// Validate checks what the command line gave, except the outputs
// (ParseOutputs checks those), and says what is wrong in one line.
func (c Config) Validate() error {
	switch {
	case c.PID < 0:
		return fmt.Errorf("-p must be a PID (a positive number), not %d", c.PID)
	case c.PID == 0 && len(c.Command) == 0:
		return errors.New("give a process (-p PID) or a command to run (-- CMD ARGS...)")
	case c.PID != 0 && len(c.Command) > 0:
		return errors.New("give either -p PID or a command, not both")
	case c.Hz < 1 || c.Hz > sampler.MaxHz:
		return fmt.Errorf("-F must be between 1 and %d Hz, not %d", sampler.MaxHz, c.Hz)
	case c.Duration < 0:
		return fmt.Errorf("-d must be positive, or 0 to record until the target exits, not %v", c.Duration)
	case c.MaxFrames < 1 || c.MaxFrames > unwind.MaxMaxFrames:
		return fmt.Errorf("--max-frames must be between 1 and %d, not %d", unwind.MaxMaxFrames, c.MaxFrames)
	case c.KernelStackBytes != 0 && (c.KernelStackBytes < 8<<10 || c.KernelStackBytes > target.MaxKernelStackBytes):
		return fmt.Errorf("--stack-bytes must be between %d and %d, not %d", 8<<10, target.MaxKernelStackBytes, c.KernelStackBytes)
	case c.Mode != profile.ModeCPU && c.Mode != profile.ModeWall:
		return fmt.Errorf("unknown mode %d", c.Mode)
	}
	return nil
}

// Run records until ctx ends, Duration passes, a signal comes or every
// target exited, writes the outputs, and returns the exit status: a
// launched command's own status when it is not 0, else 1 when an output
// could not be written or the target not started or attached, 2 for a
// configuration the sampler refused. The first signal stops sampling and
// is passed on to a launched command, which Run then waits for; a second
// makes Run close every target, kill the command and return 128 plus the
// signal's number at once, so that nothing waits on a command that ignores
// the first.
func Run(ctx context.Context, cfg Config) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if cfg.Duration > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, cfg.Duration)
		defer stop()
	}
	cfg.Stderr = &lockedWriter{w: cfg.Stderr}
	rec := &recording{attachFn: cfg.Attach}
	rec.intr.fromTerminal = cfg.FromTerminal
	done := make(chan int, 1)
	go func() { done <- rec.run(ctx, cfg) }()
	for {
		select {
		case code := <-done:
			return code
		case sig := <-cfg.Signals:
			if rec.intr.interrupt(sig, cfg.Stderr, cfg.Quiet) {
				cancel()
				continue
			}
			return rec.abandon(sig, cfg.Stderr)
		}
	}
}

// quietDrainInterval is the longest record waits between two drains of
// kernel samples, while no process or thread was created on the system
// (sampler.Config.Settled) and the rings hold that long: each wake-up
// costs the profiled threads a CPU for a while, and a second apart they
// cost next to nothing. Otherwise drains come at least every 100 ms.
const quietDrainInterval = time.Second

// spoolBytes bounds the samples a recording keeps before it interns their
// stacks (sampler.Config.SpoolBytes): half a minute of two threads' samples
// 30 frames deep at 999 Hz. With what process rings keep before they hand
// samples out (48 MiB of heap at most), it bounds the samples record holds.
const spoolBytes = 16 << 20

// run is Run's recording, on a goroutine of its own so that a second
// signal need not wait for it.
func (rec *recording) run(ctx context.Context, cfg Config) int {
	stderr := cfg.Stderr
	var windows []*profile.Window
	status := newStatusLine(unlocked(stderr), cfg.Quiet)
	opts := target.Options{MaxFrames: cfg.MaxFrames, Continuous: true, Unwind: cfg.Unwind, Kernel: target.KernelSampling{StackBytes: cfg.KernelStackBytes}}
	if cfg.Mode == profile.ModeCPU && !cfg.StopThreads {
		opts.Kernel.Period = time.Second / time.Duration(cfg.Hz)
		opts.Kernel.MaxDrainInterval = quietDrainInterval
		// A launched command whose code keeps frame pointers is
		// sampled as perf record -g samples it: events it inherits,
		// opened before it runs.
		opts.Kernel.ProcessRings = true
	}
	rec.opts = opts
	cache := symcache.New(symcache.Options{})
	symbols := newSymbolReader(cache)
	defer symbols.finish()
	s, err := sampler.New(sampler.Config{
		Hz:        cfg.Hz,
		Mode:      cfg.Mode,
		MaxFrames: cfg.MaxFrames,
		OnWindow:  func(w *profile.Window) { windows = append(windows, w) },
		Settled:   settled(cfg.Settled),
		// Symbols are read as samples first hit an image, while its
		// process lives (darwin reads them from the task's memory).
		OnImagesHit: symbols.add,
		// Interning and counting wait until the command ran, as long as
		// the samples fit.
		SpoolBytes: spoolBytes,
		// The times of samples, for a timeline output.
		Timeline: timeline(cfg.Outputs),
		// Children are looked for between ticks, on the sampler's own
		// goroutine: a goroutine of their own would wake the process ten
		// more times a second.
		OnTick: func(p sampler.Progress) {
			status.update(p)
			rec.followChildren(p.Elapsed)
		},
	})
	if err != nil {
		fmt.Fprintf(stderr, "macprof record: %v\n", err)
		return 2
	}
	rec.s = s
	if opts.Kernel.Period > 0 {
		// A kernel sample buffer half full is drained at once, so that
		// buffers can be sized by what their threads use.
		opts.Kernel.SamplesWaiting = s.DrainSoon
		rec.opts = opts
	}
	unprepare := func() {}
	if cfg.Prepare != nil {
		unprepare = cfg.Prepare()
	}
	defer func() { unprepare() }()
	var waitChild func() int
	var launched target.Launched
	// What the command tree used is its rusage once reaped: the children
	// macprof waited for, less those before.
	treeBefore, treeKnown := childrenCPU()
	var launchedAt time.Time
	if len(cfg.Command) > 0 {
		launchedAt = time.Now()
		t, err := cfg.Launch(cfg.Command, opts)
		if err != nil {
			fmt.Fprintf(stderr, "macprof record: %v\n", err)
			return 1
		}
		waitChild, launched = t.Wait, t
		rec.intr.launched(t)
		rec.add(t, true)
		rec.root = t
		if cfg.Descendants != nil {
			rec.descendants = cfg.Descendants()
		}
	} else if err := rec.attach(cfg.PID, false); err != nil {
		fmt.Fprintf(stderr, "macprof record: %v\n", err)
		return 1
	}
	// The drains may be a second apart: the end of the command (or the
	// process) is not waited for that long.
	pid := cfg.PID
	if rec.root != nil {
		pid = rec.root.PID()
	}
	if pid > 0 && cfg.WatchExit != nil {
		if stop, err := cfg.WatchExit(pid, s.Wake); err == nil {
			defer stop()
		} else {
			// Most often the process is gone already: the first tick
			// sees it, rather than a drain a second away.
			s.Wake()
		}
	}
	restore := func() {}
	if cfg.Tune != nil {
		restore = cfg.Tune()
	}
	// What a process given by -p used while it was recorded, to say what
	// share of it the profile holds (a launched command's is its rusage).
	cpuBefore, cpuKnown := rec.attachedCPU(len(cfg.Command) == 0)
	runErr := s.Run(ctx)
	var cpuUsed time.Duration
	if after, ok := rec.attachedCPU(cpuKnown); ok {
		cpuUsed = after - cpuBefore
	}
	restore()
	unprepare()
	unprepare = func() {}
	status.done()
	sampleErr, sampleWarn := rec.kernelSampleNotes()
	// Asked before the targets are closed: a closed target may report
	// itself exited.
	cmdExited := false
	if e, ok := launched.(target.ExitReporter); ok {
		cmdExited = e.Exited()
	}
	rec.closeAll()
	// Only now, with every thread released, a signal reaches the command
	// without passing through the tracer.
	rec.intr.detached()
	if runErr != nil && !errors.Is(runErr, sampler.ErrAllExited) {
		fmt.Fprintf(stderr, "macprof record: %v\n", runErr)
	}

	// A command that exited is reaped now, so that the summary can say
	// what share of its tree's CPU time the profile holds.
	var tree time.Duration
	if cmdExited && treeKnown {
		st := waitChild()
		rec.intr.reaped()
		waitChild = func() int { return st }
		if after, ok := childrenCPU(); ok {
			tree = after - treeBefore
		}
	}

	// Merge windows (record makes one) and write every output.
	w := profile.Merge(windows)
	if !launchedAt.IsZero() && launchedAt.Before(w.Start) {
		// The command's threads are counted from its start, and
		// sampling starts only once the launch (an attach that may
		// take long on a loaded machine) returned: the profile spans
		// the run from the launch.
		w.Start = launchedAt
	}
	code := 0
	symbols.finish()
	if !writeOutputs(stderr, cfg.Outputs, w, cache, cfg.Quiet, exporter.Options{Command: cfg.Command, AppOnly: cfg.AppOnly}) {
		code = 1
	}
	if !cfg.Quiet {
		// The summary follows the outputs, so that its profiler CPU is
		// all macprof used from its start to the profile written, not
		// only the sampling window's.
		if cpu, ok := selfCPU(); ok {
			w.Stats.ProfilerCPU = cpu
		}
		WriteSummary(stderr, w, s.Period())
		writeTreeShare(stderr, w, s.Period(), tree)
		writeProcessShare(stderr, w, s.Period(), cfg.PID, cpuUsed)
		if sampleErr != nil {
			fmt.Fprintf(stderr, "macprof: some threads were stopped for their samples, as kernel samples were refused: %v\n", sampleErr)
		}
		if sampleWarn != nil {
			fmt.Fprintf(stderr, "macprof: %v\n", sampleWarn)
		}
	}
	rec.releaseAll()
	if waitChild != nil {
		st := rec.waitCommand(waitChild, cmdExited, code == 0, cfg.Quiet, stderr, pid)
		rec.intr.reaped()
		if st != 0 {
			return st
		}
	}
	return code
}

// settled returns the sampler's Settled function from the backend's, or nil.
func settled(watch func() func() bool) func() bool {
	if watch == nil {
		return nil
	}
	return watch()
}

// writeOutputs writes w to every output, saying so on stderr unless quiet,
// and reports whether every one was written.
func writeOutputs(stderr io.Writer, outputs []Output, w *profile.Window, cache *symcache.Cache, quiet bool, opts exporter.Options) bool {
	ok := true
	for _, o := range outputs {
		if err := exporter.WriteFile(o.Path, o.Format, w, cache, opts); err != nil {
			fmt.Fprintf(stderr, "macprof record: write %s: %v\n", o.Path, err)
			ok = false
			continue
		}
		if !quiet {
			fmt.Fprintf(stderr, "macprof: wrote %s (%s)\n", o.Path, o.Format)
		}
	}
	return ok
}

// writeWallShare says what wall profile w, sampled at period, holds: each
// sample a period of one thread's time, running or waiting, so that it adds
// up to its threads times the recording's duration, not to CPU time.
func writeWallShare(out io.Writer, w *profile.Window, period time.Duration) {
	held := time.Duration(w.SampleCount()) * period
	span := w.End.Sub(w.Start)
	type thread struct {
		pid int
		tid target.ThreadID
	}
	threads := map[thread]bool{}
	for _, s := range w.Samples {
		if s.Thread != 0 {
			threads[thread{s.PID, s.Thread}] = true
		}
	}
	avg := ""
	if span > 0 {
		avg = fmt.Sprintf(" (%.1f threads at a time on average)", float64(held)/float64(span))
	}
	share := ""
	due := w.Stats.WallDue
	if due > 0 {
		share = fmt.Sprintf(", %.1f%% of the %s due (each thread listed, at each tick)", min(100, 100*float64(w.SampleCount())/float64(due)), (time.Duration(due) * period).Round(time.Millisecond))
	}
	fmt.Fprintf(out, "macprof: the wall profile holds %s of thread time, running or waiting, of %d thread(s) over %s%s%s: wall time, not CPU time\n",
		held.Round(time.Millisecond), len(threads), span.Round(time.Millisecond), avg, share)
	if due > 0 && 10*w.SampleCount() < 9*due {
		fmt.Fprintf(out, "macprof: so %.1f%% of the threads' time is missing from it (the missed counts say why): at a lower -F each tick has longer to capture the threads\n",
			100-100*float64(w.SampleCount())/float64(due))
	}
}
