package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/macprof/macprof/internal/cli"
	"github.com/macprof/macprof/record"
	"github.com/macprof/macprof/sampler"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// recordGCPercent is the garbage collector's target while recording.
const recordGCPercent = 400

func init() {
	register(command{name: "record", summary: "sample a process (or a command) and write pprof, folded stacks, a flame graph or a timeline", run: runRecord})
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
  .speedscope.json a timeline per thread for speedscope (speedscope.app or
                   npx speedscope FILE): its Time Order view shows when each
                   thread ran, and on what (the first 2 Mi samples' times)

Modes: cpu (default) counts only threads that ran since the last tick, so a
profile shows where CPU time goes; idle threads are not even stopped. wall
counts every thread on every tick (an idle thread's last stack again), so a
profile shows where threads wait too. On Linux a wall capture stops its
thread, and a busy one stops only once it gets a CPU: with many busy
threads on a loaded machine a tick may last seconds, and the summary says
what share of the threads' time the profile holds.

Rate: 99 Hz by default; 999 Hz gives ten times the detail.

Stacks: on Linux, in cpu mode, the kernel samples each thread (perf_event);
a thread is stopped once, briefly, for its first stack when its samples
start, and not again. With --capture stop, in wall mode, or where the
kernel refuses (perf_event_paranoid), each sample stops the thread for
about 60 µs instead. --unwind chooses how stacks are walked: by default from each
object's unwind tables, by frame pointers where it has none. A stack deeper
than the kernel's copy is read on from the process, each frame checked, its
callers above a [read after sample] frame; where that fails it ends in
[truncated]. The copy grows to the kernel's limit (65528 bytes) for threads
that need it; --stack-bytes lowers that.
docs/ARCHITECTURE.md says how each way works; bench/RESULTS.md what it costs.

The summary (stderr) says what share of the target's CPU time the profile
holds. Time no stack could be given (threads too short to capture) is counted
as [unsampled], samples the kernel dropped as [lost: ...]: never on a stack
of the program's, so the totals match the CPU time used.

A launched command runs as the invoking user even under sudo; the processes
it starts are followed (each with a pid label), and macprof exits with the
command's exit status. SIGTERM, SIGHUP or Ctrl-C stops the recording and
reaches the command too; macprof writes the profile and waits for it. A
second signal kills the command and exits at once (128 + signal).

Examples:
  macprof record -p 1234 -d 30 -o cpu.pb.gz
  macprof record -F 999 -o flame.svg -o stacks.folded -- ./mybenchmark -n 10
  macprof record --mode wall -d 10s -p 1234 -o wall.pb.gz
  macprof record --unwind fp -o cpu.pb.gz -- make -j2      # as perf record -g
  sudo macprof record -o app.svg -- ./app  # macOS: root, or see macprof setup
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
	// The stop signals are taken first of all: one that comes while the
	// flags are read and the outputs checked stops the recording as soon
	// as it starts, where one that came before was lost (a script's
	// background job ignores SIGINT until a handler is set).
	sigs := make(chan os.Signal, 2)
	notifyStop(sigs)
	fs := cli.NewFlagSet("record", recordSynopsis, recordHelp, stderr)
	pid := fs.PIDs(false, "`PID` of a running process to record")
	hz := fs.Int("F", sampler.DefaultHz, "sampling rate in `HZ` per thread")
	dur := fs.Duration("d", "duration", 0, "stop after `SECONDS` (5, 2.5) or a duration (30s, 500ms); 0 records until the target exits or Ctrl-C. A launched command runs on: macprof writes the profile, then waits for it (Ctrl-C ends it)")
	mode := fs.String("mode", "cpu", "`MODE`: cpu (threads that ran) or wall (every thread)")
	capture := fs.String("capture", "auto", "`HOW` threads are captured in cpu mode on Linux: auto (kernel samples where allowed, else stops) or stop (ptrace stops only)")
	format := fs.String("format", "", "`FORMAT` for every -o (pprof, folded, svg, speedscope) instead of the extension")
	maxFrames := fs.Int("max-frames", 512, "stop each stack walk after `N` frames")
	stackBytes := fs.Int("stack-bytes", target.DefaultKernelStackBytes, fmt.Sprintf("Linux: copy up to `N` bytes of stack per sample of a deep thread (at most %d, the default); deeper stacks are read on after the sample", target.MaxKernelStackBytes))
	unwindFlag := fs.String("unwind", "auto", "`HOW` stacks are walked: auto (unwind tables, else frame pointers; macOS: frame pointers), cfi (tables only) or fp (frame pointers, as perf record -g)")
	quiet := fs.Bool("q", false, "no status line and no summary")
	var outs multiFlag
	fs.Var(&outs, "o", "write the profile to `FILE` (repeatable)")
	fs.Alias("o", "output")
	appOnly := cli.AppOnlyFlags(fs.FlagSet)
	if st, ok := fs.ParseArgs(args); !ok {
		return st
	}
	fail := fs.UsageError
	app, err := appOnly()
	if err != nil {
		return fail("%v", err)
	}
	m, ok := cli.ParseMode(*mode)
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
	cfg := record.Config{PID: pid.One(), Command: fs.Args(), Hz: *hz, Duration: *dur, Mode: m, StopThreads: *capture == "stop",
		MaxFrames: *maxFrames, KernelStackBytes: *stackBytes, Unwind: method, Quiet: *quiet, Stderr: stderr, Prepare: prepareForSampling, Tune: tuneForSampling, AppOnly: app,
		Attach: osBackend.Attach, Launch: osBackend.Launch, Descendants: osBackend.Descendants, Settled: osBackend.Settled,
		WatchExit: osBackend.WatchExit, FromTerminal: osBackend.FromTerminal}
	if err := cfg.Validate(); err != nil {
		return fail("%v", err)
	}
	// Every output is checked before sampling starts, not after.
	if cfg.Outputs, err = record.ParseOutputs(outs, *format); err != nil {
		return fail("%v", err)
	}
	cfg.Signals = sigs
	// The heap of a recording grows by its spool of samples and stays
	// small otherwise: a collection per fivefold growth rather than per
	// doubling, none while a short recording runs (the first came 35 ms
	// into every recording, as the command started).
	debug.SetGCPercent(recordGCPercent)
	return record.Run(context.Background(), cfg)
}
