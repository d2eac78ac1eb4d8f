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
	"time"

	"github.com/macprof/macprof/exporter"
	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/sampler"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
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
	Outputs     []Output
	// Quiet leaves out the status line, the summary and the notes.
	Quiet bool
	// Stderr receives the status line, the summary and every message.
	Stderr io.Writer

	// Attach opens the OS backend for a running process.
	Attach func(pid int, o target.Options) (target.Target, error)
	// Launch starts a command and attaches to it.
	Launch func(args []string, o target.Options) (target.Launched, error)
	// Descendants returns a function that appends the PIDs of a process's
	// living descendants to dst[:0], so that a launched command's
	// descendants are recorded too; nil means the OS's process tree.
	Descendants func() func(root int, dst []int) []int
	// Tune, when set, prepares macprof's own process for sampling once the
	// target runs, and returns what undoes it.
	Tune func() (restore func())
}

// Run records until ctx ends or every target exited, writes the outputs,
// and returns the exit status: a launched command's own status when it is
// not 0, else 1 when an output could not be written or the target not
// started or attached, 2 for a configuration the sampler refused.
func Run(ctx context.Context, cfg Config) int {
	stderr := cfg.Stderr
	var windows []*profile.Window
	status := newStatusLine(stderr, cfg.Quiet)
	opts := target.Options{MaxFrames: cfg.MaxFrames, Continuous: true}
	if cfg.Mode == profile.ModeCPU && !cfg.StopThreads {
		opts.KernelSamplePeriod = time.Second / time.Duration(cfg.Hz)
	}
	rec := &recording{opts: opts, attachFn: cfg.Attach}
	s, err := sampler.New(sampler.Config{
		Hz:        cfg.Hz,
		Mode:      cfg.Mode,
		MaxFrames: cfg.MaxFrames,
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
		fmt.Fprintf(stderr, "macprof record: %v\n", err)
		return 2
	}
	rec.s = s
	var waitChild func() int
	if len(cfg.Command) > 0 {
		t, err := cfg.Launch(cfg.Command, opts)
		if err != nil {
			fmt.Fprintf(stderr, "macprof record: %v\n", err)
			return 1
		}
		waitChild = t.Wait
		rec.add(t, true)
		rec.root = t
		if cfg.Descendants == nil {
			cfg.Descendants = processTree
		}
		rec.descendants = cfg.Descendants()
	} else if err := rec.attach(cfg.PID, false); err != nil {
		fmt.Fprintf(stderr, "macprof record: %v\n", err)
		return 1
	}
	restore := func() {}
	if cfg.Tune != nil {
		restore = cfg.Tune()
	}
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
	if !cfg.Quiet {
		WriteSummary(stderr, w, s.Period())
		if sampleErr != nil {
			fmt.Fprintf(stderr, "macprof: some threads were stopped for their samples, as kernel samples were refused: %v\n", sampleErr)
		}
		if sampleWarn != nil {
			fmt.Fprintf(stderr, "macprof: %v\n", sampleWarn)
		}
	}
	code := 0
	if !writeOutputs(stderr, cfg.Outputs, w, cfg.Quiet) {
		code = 1
	}
	if waitChild != nil {
		if st := waitChild(); st != 0 {
			return st
		}
	}
	return code
}

// writeOutputs writes w to every output, saying so on stderr unless quiet,
// and reports whether every one was written.
func writeOutputs(stderr io.Writer, outputs []Output, w *profile.Window, quiet bool) bool {
	cache := symcache.New(symcache.Options{})
	ok := true
	for _, o := range outputs {
		if err := exporter.WriteFile(o.Path, o.Format, w, cache, exporter.Options{ThreadRoot: false}); err != nil {
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
