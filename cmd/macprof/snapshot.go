package main

import (
	"fmt"
	"io"

	"github.com/macprof/macprof/snapshot"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

func init() {
	register(command{name: "snapshot", summary: "print every thread's stack of a running process, once", run: runSnapshot})
}

const snapshotHelp = `
Stops every thread of a running process at once, reads each thread's
registers, copies its stack in one read and walks the frame pointers, resumes
the process, and only then symbolizes and prints the stacks, grouped by
thread the way eu-stack prints them. The process is stopped only for the
capture (see "stopped for" in the output), never for symbolization.

Frames come from frame pointers: code built without them (many system
libraries) may end a stack early or hide its immediate caller. A stack that
ends for any other reason than the end of the chain says why.

Examples:
  macprof snapshot -p 1234
  macprof snapshot -p 1234 --json | jq '.threads[].frames[0].function'
`

func runSnapshot(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("snapshot", "macprof snapshot -p PID [--json] [--max-frames N]", snapshotHelp, stderr)
	pid := fs.pids(false, "`PID` of the process to snapshot (required)")
	asJSON := fs.Bool("json", false, "print JSON for scripts instead of text")
	maxFrames := fs.Int("max-frames", unwind.DefaultMaxFrames, fmt.Sprintf("stop each walk after `N` frames (at most %d)", unwind.MaxMaxFrames))
	if st, ok := fs.parse(args); !ok {
		return st
	}
	cfg := snapshot.Config{PID: pid.pid(), Options: target.Options{MaxFrames: *maxFrames}, Attach: osBackend.attach}
	if err := cfg.Validate(); err != nil || fs.NArg() > 0 {
		if err == nil {
			err = fmt.Errorf("unexpected argument %q: give the process as -p PID", fs.Arg(0))
		}
		return fs.usageError("%v", err)
	}
	raisePriority()
	snap, err := snapshot.Take(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "macprof snapshot: %v\n", err)
		return 1
	}
	if *asJSON {
		if err := snap.WriteJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "macprof snapshot: %v\n", err)
			return 1
		}
	} else {
		snap.WriteText(stdout)
	}
	if n := len(snap.Ended); n > 0 {
		fmt.Fprintf(stderr, "macprof snapshot: %d thread(s) ended before the capture, so have no stack: %v\n", n, snap.Ended)
	}
	if len(snap.Missing) > 0 {
		for _, m := range snap.Missing {
			fmt.Fprintf(stderr, "macprof snapshot: incomplete: %s\n", m)
		}
		return 1
	}
	return 0
}
