package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/macprof/macprof/record"
	"github.com/macprof/macprof/sampler"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// recordGCPercent is the garbage collector's target while recording.
const recordGCPercent = 400

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
  .svg             a self-contained flame graph: open it in a browser; click
                   to zoom, Ctrl-F or / to search (a regex; "Matched: N%")

Modes: cpu (default) counts only threads that ran since the last tick, so a
profile shows where CPU time goes; idle threads are not even stopped. wall
counts every thread on every tick (an idle thread's last stack again), so a
profile shows where threads wait too.

Rate: 99 Hz by default; 999 Hz gives ten times the detail.

Capture (Linux): in cpu mode the kernel samples each thread (perf_event:
every period of its CPU time it copies the thread's registers and the top
of its stack, in the thread's own timer interrupt, into a buffer), so no
thread is stopped; macprof collects the samples up to once a second while
no process or thread starts on the machine, ten times a second otherwise,
more often for stack copies at high rates, and at once when a buffer of
callchains is half full, rather than waking at the sampling rate (a busy
thread's buffer grows from 128 KiB, as root); it
keeps them (up to 16 MiB) to intern their stacks once the command has run
(sooner, a part at a time, when there are more).
A launched command whose code all keeps frame pointers (a static Go
binary, or any with --unwind fp) is sampled as perf record -g samples it:
one event per CPU, inherited by every thread it starts, opened while it is
held at its exec, so that no thread is stopped or given a buffer of its
own; while it runs macprof only copies the buffers into its memory (up to
16 MiB at a time) and reads the samples once it has exited. The processes
it starts inherit the events: their samples are kept too, each looked up in
the images its process had when it was taken (before or after an exec). Otherwise code that keeps frame pointers (Go, or where the unwind
tables say so) is sampled as the kernel's own callchain, as perf record -g
takes it;
elsewhere a sample copies 8 KiB of stack, then 16 and 32 KiB for a thread
whose stacks go deeper (where locked memory is not budgeted: root), and up to
64 KiB with --stack-bytes 65528; deeper stacks end there, marked truncated. Where the kernel does not allow kernel
samples (perf_event_paranoid, the locked-memory budget for its buffers),
or with --capture stop, and in wall mode, each sample stops the thread for
about 60 µs (ptrace); a thread that does not stop within 50 ms (an
uninterruptible sleep) is skipped and counted as missed. Idle threads are
never stopped in cpu mode. Measured on the project's 2-CPU test machine
with two busy threads, and the figures for each way in bench/RESULTS.md.

A launched command runs as the invoking user even under sudo; the processes
it starts are followed (each is its own set of mappings, with a pid label),
and macprof exits with the command's exit status. SIGTERM, SIGHUP or Ctrl-C
stops the recording and reaches the command too; macprof writes the profile
and waits for it. A second signal kills the command and exits at once.

Examples:
  macprof record -p 1234 -d 30 -o cpu.pb.gz
  macprof record -F 999 -o flame.svg -o stacks.folded -- ./mybenchmark -n 10
  macprof record --mode wall -d 10s -p 1234 -o wall.pb.gz
`

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// recordSynopsis is record's usage, one form a line.
const recordSynopsis = `
macprof record -p PID [-F HZ] [-d SECONDS] [--mode cpu|wall] -o FILE [-o FILE...]
macprof record [-F HZ] [-d SECONDS] [--mode cpu|wall] -o FILE [-o FILE...] -- CMD ARGS...`

func runRecord(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("record", recordSynopsis, recordHelp, stderr)
	pid := fs.pids(false, "`PID` of a running process to record")
	hz := fs.Int("F", sampler.DefaultHz, "sampling rate in `HZ` per thread")
	dur := fs.duration("d", "duration", 0, "stop after `SECONDS` (5, 2.5) or a duration (30s, 500ms); 0 records until the target exits or Ctrl-C")
	mode := fs.String("mode", "cpu", "`MODE`: cpu (threads that ran) or wall (every thread)")
	capture := fs.String("capture", "auto", "`HOW` threads are captured in cpu mode on Linux: auto (kernel samples where allowed, else stops) or stop (ptrace stops only)")
	format := fs.String("format", "", "`FORMAT` for every -o (pprof, folded, svg) instead of the extension")
	maxFrames := fs.Int("max-frames", 512, "stop each stack walk after `N` frames")
	stackBytes := fs.Int("stack-bytes", target.DefaultKernelStackBytes, fmt.Sprintf("Linux, kernel samples: copy up to `N` bytes of stack with each sample of a thread whose stacks go deeper than the first copies (8 KiB, doubled as walks run past it), up to %d, the kernel's limit (perf --call-graph dwarf,65528); each sample costs its copy, and walks deeper than it end in [truncated]", target.MaxKernelStackBytes))
	unwindFlag := fs.String("unwind", "auto", "`HOW` stacks are walked: auto (Linux: DWARF unwind tables where an object has them, frame pointers elsewhere, and the kernel's own frame-pointer callchain for threads whose stacks the tables say it walks exactly; macOS: frame pointers), cfi (Linux: unwind tables only; macOS: compact unwind tables where an image has them, frame pointers elsewhere) or fp (frame pointers only; on Linux the kernel's callchain, as perf record -g)")
	quiet := fs.Bool("q", false, "no status line and no summary")
	var outs multiFlag
	fs.Var(&outs, "o", "write the profile to `FILE` (repeatable)")
	fs.alias("o", "output")
	appOnly := appOnlyFlags(fs.FlagSet)
	if st, ok := fs.parse(args); !ok {
		return st
	}
	fail := fs.usageError
	app, err := appOnly()
	if err != nil {
		return fail("%v", err)
	}
	m, ok := parseMode(*mode)
	if !ok {
		return fail("--mode must be cpu or wall, not %q", *mode)
	}
	if *capture != "auto" && *capture != "stop" {
		return fail("--capture must be auto or stop, not %q", *capture)
	}
	method, err := unwind.ParseMethod(*unwindFlag)
	if err != nil {
		return fail("--unwind: %v", err)
	}
	cfg := record.Config{PID: pid.pid(), Command: fs.Args(), Hz: *hz, Duration: *dur, Mode: m, StopThreads: *capture == "stop",
		MaxFrames: *maxFrames, KernelStackBytes: *stackBytes, Unwind: method, Quiet: *quiet, Stderr: stderr, Prepare: prepareForSampling, Tune: tuneForSampling, AppOnly: app,
		Attach: osBackend.attach, Launch: osBackend.launch, Descendants: osBackend.descendants, Settled: osBackend.settled,
		WatchExit: osBackend.watchExit, FromTerminal: osBackend.fromTerminal}
	if err := cfg.Validate(); err != nil {
		return fail("%v", err)
	}
	// Every output is checked before sampling starts, not after.
	if cfg.Outputs, err = record.ParseOutputs(outs, *format); err != nil {
		return fail("%v", err)
	}
	sigs := make(chan os.Signal, 2)
	notifyStop(sigs)
	cfg.Signals = sigs
	// The heap of a recording grows by its spool of samples and stays
	// small otherwise: a collection per fivefold growth rather than per
	// doubling, none while a short recording runs (the first came 35 ms
	// into every recording, as the command started).
	debug.SetGCPercent(recordGCPercent)
	return record.Run(context.Background(), cfg)
}
