package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/macprof/macprof/internal/cli"
	"github.com/macprof/macprof/snapshot"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

func init() {
	register(command{name: "snapshot", summary: "print every thread's stack of a running process, once", run: runSnapshot})
}

const snapshotHelp = `
Stops every thread of a running process at once, reads each thread's
registers and copies its stack in one read, and resumes the process: it is
stopped only for the copy (see "stopped for" in the output). Then, with the
process running, it walks each copy, symbolizes the frames and prints the
stacks, grouped by thread the way eu-stack prints them.

On Linux the walk follows the unwind tables (DWARF CFI, .eh_frame or
.debug_frame) of the code it meets, built for those objects and functions
only, so code built without frame pointers (many system libraries) has
whole stacks; code no table covers is walked by frame pointers. On macOS
frames come from frame records (frame pointers). A stack that ends for any
other reason than its end says why.

Frames are named by function, as eu-stack names them; --lines adds file:line
and inlined calls (as eu-stack -s -i), read from debug information, which
takes longer.

Examples:
  macprof snapshot -p 1234
  macprof snapshot -p 1234 --lines
  macprof snapshot -p 1234 --json | jq '.threads[].frames[0].function'
`

// snapshotMemoryLimit is the heap past which a snapshot collects garbage.
const snapshotMemoryLimit = 128 << 20

func runSnapshot(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("snapshot", "macprof snapshot -p PID [--json] [--lines] [--max-frames N]", snapshotHelp, stderr)
	pid := fs.PIDs(false, "`PID` of the process to snapshot (required)")
	asJSON := fs.Bool("json", false, "print JSON for scripts instead of text")
	lines := fs.Bool("lines", false, "add file:line and inlined calls to the frames (as eu-stack -s -i; reads debug information, which takes longer)")
	maxFrames := fs.Int("max-frames", unwind.DefaultMaxFrames, fmt.Sprintf("stop each walk after `N` frames (at most %d)", unwind.MaxMaxFrames))
	if st, ok := fs.ParseArgs(args); !ok {
		return st
	}
	cfg := snapshot.Config{PID: pid.One(), Options: target.Options{MaxFrames: *maxFrames}, Attach: osBackend.Attach, Lines: *lines}
	if err := cfg.Validate(); err != nil || fs.NArg() > 0 {
		if err == nil {
			err = fmt.Errorf("unexpected argument %q: give the process as -p PID", fs.Arg(0))
		}
		return fs.UsageError("%v", err)
	}
	raisePriority()
	// One short run whose heap is mostly the tables it keeps to the end:
	// collecting it took half of a snapshot's CPU time; the memory limit
	// still collects when tables grow large.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(snapshotMemoryLimit))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	hugeHeapAhead()
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
