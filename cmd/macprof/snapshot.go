package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/symcache"
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

// snapshotJSON is the --json output.
type snapshotJSON struct {
	PID        int          `json:"pid"`
	Executable string       `json:"executable,omitempty"`
	StoppedNS  int64        `json:"stopped_ns"`
	Threads    []threadJSON `json:"threads"`
	// Missing lists what the snapshot could not capture.
	Missing []string `json:"missing,omitempty"`
}

type threadJSON struct {
	TID       uint64      `json:"tid"`
	Name      string      `json:"name,omitempty"`
	Frames    []frameJSON `json:"frames"`
	Truncated string      `json:"truncated,omitempty"`
	Error     string      `json:"error,omitempty"`
}

type frameJSON struct {
	Address  string `json:"address"`
	Image    string `json:"image,omitempty"`
	Function string `json:"function,omitempty"`
	Offset   uint64 `json:"offset"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Inlined  bool   `json:"inlined,omitempty"`
}

func runSnapshot(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("snapshot", "macprof snapshot -p PID [--json] [--max-frames N]", snapshotHelp, stderr)
	pid := fs.Int("p", 0, "`PID` of the process to snapshot (required)")
	asJSON := fs.Bool("json", false, "print JSON for scripts instead of text")
	maxFrames := fs.Int("max-frames", unwind.DefaultMaxFrames, fmt.Sprintf("stop each walk after `N` frames (at most %d)", unwind.MaxMaxFrames))
	if st, ok := parseFlags(fs, args); !ok {
		return st
	}
	if *pid <= 0 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "macprof snapshot: give the process as -p PID")
		fs.Usage()
		return 2
	}
	if *maxFrames < 1 || *maxFrames > unwind.MaxMaxFrames {
		fmt.Fprintf(stderr, "macprof snapshot: --max-frames must be in [1, %d]\n", unwind.MaxMaxFrames)
		return 2
	}
	raisePriority()
	snap, err := takeSnapshot(*pid, target.Options{MaxFrames: *maxFrames})
	if err != nil {
		fmt.Fprintf(stderr, "macprof snapshot: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(snap); err != nil {
			fmt.Fprintf(stderr, "macprof snapshot: %v\n", err)
			return 1
		}
	} else {
		printSnapshot(stdout, snap)
	}
	if len(snap.Missing) > 0 {
		for _, m := range snap.Missing {
			fmt.Fprintf(stderr, "macprof snapshot: incomplete: %s\n", m)
		}
		return 1
	}
	return 0
}

// takeSnapshot attaches, captures every thread at once, detaches, then
// symbolizes.
func takeSnapshot(pid int, opts target.Options) (*snapshotJSON, error) {
	t, err := attach(pid, opts)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	snap := &snapshotJSON{PID: pid}
	// Images and names are read while the process runs.
	imgs, imgErr := t.Images()
	tids, err := t.Threads(nil)
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	names := make(map[target.ThreadID]string, len(tids))
	for _, id := range tids {
		if info, err := t.Info(id); err == nil {
			names[id] = info.Name
		}
	}
	snapper, ok := t.(target.Snapshotter)
	if !ok {
		t.Close()
		return nil, fmt.Errorf("this backend cannot stop every thread at once")
	}
	caps, capErr := snapper.CaptureAll(nil)
	if cerr := t.Close(); cerr != nil {
		snap.Missing = append(snap.Missing, "detach: "+cerr.Error())
	}
	if capErr != nil && len(caps) == 0 {
		return nil, fmt.Errorf("capture: %w", capErr)
	}
	if imgs2, err := t.Images(); err == nil && imgs2 != nil {
		imgs, imgErr = imgs2, nil // the set after the capture is the one in force
	}
	if imgErr != nil {
		snap.Missing = append(snap.Missing, "loaded images unknown, frames are not symbolized: "+imgErr.Error())
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
		snap.Executable = exe
	}
	cache := symcache.New(symcache.Options{})
	var stopped time.Duration
	for i := range caps {
		c := &caps[i]
		stopped = max(stopped, c.Stopped)
		th := threadJSON{TID: uint64(c.Thread), Name: names[c.Thread]}
		if c.Err != nil {
			th.Error = c.Err.Error()
			snap.Missing = append(snap.Missing, fmt.Sprintf("thread %d: %v", c.Thread, c.Err))
		}
		if c.Walk.Stop.Truncated() && c.Err == nil {
			th.Truncated = c.Walk.Stop.String()
		}
		th.Frames = symbolizeStack(cache, imgs, c.PCs)
		snap.Threads = append(snap.Threads, th)
	}
	if capErr != nil {
		snap.Missing = append(snap.Missing, capErr.Error())
	}
	snap.StoppedNS = stopped.Nanoseconds()
	return snap, nil
}

// symbolizeStack turns a captured stack into frames, expanding inlined
// calls where debug information has them.
func symbolizeStack(cache *symcache.Cache, imgs *images.Set, pcs []uint64) []frameJSON {
	out := make([]frameJSON, 0, len(pcs))
	for i, pc := range pcs {
		addr := "0x" + strconv.FormatUint(pc, 16)
		im := imgs.Lookup(pc)
		if im == nil {
			out = append(out, frameJSON{Address: addr})
			continue
		}
		for _, f := range cache.Symbolize(im, pc, i > 0) {
			out = append(out, frameJSON{
				Address:  addr,
				Image:    im.Name(),
				Function: f.Function,
				Offset:   f.Offset,
				File:     f.File,
				Line:     f.Line,
				Inlined:  f.Inlined,
			})
		}
	}
	return out
}

func printSnapshot(w io.Writer, s *snapshotJSON) {
	exe := s.Executable
	if exe == "" {
		exe = "?"
	}
	fmt.Fprintf(w, "PID %d - %s (stopped for %s)\n", s.PID, exe, time.Duration(s.StoppedNS).Round(time.Microsecond))
	for _, th := range s.Threads {
		if th.Name != "" {
			fmt.Fprintf(w, "TID %d %q:\n", th.TID, th.Name)
		} else {
			fmt.Fprintf(w, "TID %d:\n", th.TID)
		}
		if th.Error != "" {
			fmt.Fprintf(w, "    (not captured: %s)\n", th.Error)
		}
		for i, f := range th.Frames {
			fmt.Fprintf(w, "#%-2d %18s %s\n", i, f.Address, frameText(f))
		}
		if th.Truncated != "" {
			fmt.Fprintf(w, "    (stack may be incomplete: %s)\n", th.Truncated)
		}
	}
}

func frameText(f frameJSON) string {
	var s string
	switch {
	case f.Function != "":
		s = fmt.Sprintf("%s+%#x", f.Function, f.Offset)
	case f.Image != "":
		s = fmt.Sprintf("%s+%#x", f.Image, f.Offset)
	default:
		s = "??"
	}
	if f.Image != "" && f.Function != "" {
		s += " (" + f.Image + ")"
	}
	if f.File != "" {
		s += fmt.Sprintf(" at %s:%d", f.File, f.Line)
	}
	if f.Inlined {
		s += " [inlined]"
	}
	return s
}
