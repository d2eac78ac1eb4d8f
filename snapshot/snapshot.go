// Package snapshot takes a snapshot: every thread of a process stopped at
// once, its stack walked, then (with the process running again) symbolized
// and rendered as text the way eu-stack prints it, or as JSON for scripts.
package snapshot

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// Snapshot is the stacks of every thread of one process; it is also the
// --json output.
type Snapshot struct {
	PID        int      `json:"pid"`
	Executable string   `json:"executable,omitempty"`
	StoppedNS  int64    `json:"stopped_ns"`
	Threads    []Thread `json:"threads"`
	// Ended lists the threads that ended between the listing and the
	// capture: gone from the process, so not missing from its snapshot.
	Ended []uint64 `json:"ended,omitempty"`
	// Missing lists what the snapshot could not capture.
	Missing []string `json:"missing,omitempty"`
}

// Thread is one thread's stack, innermost frame first.
type Thread struct {
	TID       uint64  `json:"tid"`
	Name      string  `json:"name,omitempty"`
	Frames    []Frame `json:"frames"`
	Truncated string  `json:"truncated,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// Frame is one symbolized frame; an address with inlined calls gives one
// Frame per call, innermost first.
type Frame struct {
	Address  string `json:"address"`
	Image    string `json:"image,omitempty"`
	Function string `json:"function,omitempty"`
	Offset   uint64 `json:"offset"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Inlined  bool   `json:"inlined,omitempty"`
}

// Config says which process to snapshot and through which backend.
type Config struct {
	PID     int
	Options target.Options
	// Attach opens the OS backend for a running process; it must return a
	// target.Snapshotter.
	Attach func(pid int, o target.Options) (target.Target, error)
	// Lines adds file:line and inlined calls to the frames (--lines, as
	// eu-stack -s -i), read from DWARF or Go's line table: most of a
	// snapshot's time when asked for, so off by default.
	Lines bool
}

// Validate checks what the command line gave and says what is wrong in one
// line.
func (c Config) Validate() error {
	switch {
	case c.PID == 0:
		return errors.New("give the process as -p PID")
	case c.PID < 0:
		return fmt.Errorf("-p must be a PID (a positive number), not %d", c.PID)
	case c.Options.MaxFrames < 1 || c.Options.MaxFrames > unwind.MaxMaxFrames:
		return fmt.Errorf("--max-frames must be between 1 and %d, not %d", unwind.MaxMaxFrames, c.Options.MaxFrames)
	}
	return nil
}

// Take attaches, captures every thread at once, walks the copies with the
// unwind tables they need once the threads run again, reads the images
// then in force, detaches, then symbolizes.
// What it could not capture is listed in Snapshot.Missing, and threads that
// ended before their capture in Snapshot.Ended; an error means there is no
// snapshot at all.
func Take(cfg Config) (*Snapshot, error) {
	t, err := cfg.Attach(cfg.PID, cfg.Options)
	if err != nil {
		if why := exited(cfg.PID); why != nil {
			return nil, why
		}
		return nil, err
	}
	defer t.Close()
	snap := &Snapshot{PID: cfg.PID}
	// Names are read while the process runs.
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
	var caps []target.Capture
	var capErr error
	d, detaching := t.(detachingSnapshotter)
	if detaching {
		caps, capErr = d.CaptureAllAndDetach(nil)
	} else {
		caps, capErr = snapper.CaptureAll(nil)
	}
	var before *images.Set
	if w, ok := t.(target.CopyWalker); ok {
		// The threads run again: walk their copies with the unwind
		// tables of the objects they meet, built now (the walk during
		// the stop waits for none, so follows frame pointers where a
		// table is not built yet), of the images read last (ptrace
		// reads them beside the attach).
		before, _ = t.Images()
		w.WalkCopies(caps)
	}
	// The images in force once the addresses are known: an object
	// mapped or replaced during the capture is in this set (ptrace
	// re-reads the memory map only when its size changed, so this costs
	// one small read when nothing did).
	imgs, imgErr := t.Images()
	if imgErr != nil && before != nil {
		// The process ended during the walk.
		imgs, imgErr = before, nil
	}
	cache := symcache.New(symcache.Options{NoLines: !cfg.Lines})
	expect(cache, imgs, caps)
	// The objects' symbols load while the threads are detached;
	// symbolizing below waits for those it needs.
	loading := preload(cache, imgs, caps)
	defer loading.Wait()
	detached := make(chan error, 1)
	if detaching {
		// Every captured thread was let go from its stop: Close
		// only ends the tracer (and lets go of threads started
		// since), which takes less than a goroutine to run it.
		detached <- t.Close()
	} else {
		// A backend that cannot detach at the capture stops every
		// thread again to detach it, which can take as long as the
		// symbolizing, which needs the target no more: the two run
		// side by side. The deferred Close waits for this one on
		// every return.
		go func() { detached <- t.Close() }()
	}
	if capErr != nil && len(caps) == 0 {
		return nil, fmt.Errorf("capture: %w", capErr)
	}
	if imgErr != nil {
		snap.Missing = append(snap.Missing, "loaded images unknown, frames are not symbolized: "+imgErr.Error())
	}
	snap.Executable = executable(cfg.PID)
	var stopped time.Duration
	for i := range caps {
		c := &caps[i]
		if errors.Is(c.Err, target.ErrNoThread) {
			// A process that creates and ends threads all the time
			// has some end between the listing and the stop.
			snap.Ended = append(snap.Ended, uint64(c.Thread))
			continue
		}
		stopped = max(stopped, c.Stopped)
		th := Thread{TID: uint64(c.Thread), Name: names[c.Thread]}
		if c.Err != nil {
			th.Error = c.Err.Error()
			msg := c.Err.Error()
			if prefix := fmt.Sprintf("thread %d: ", c.Thread); !strings.HasPrefix(msg, prefix) {
				msg = prefix + msg // backends name the thread, or not
			}
			snap.Missing = append(snap.Missing, msg)
		}
		if c.Walk.Stop.Truncated() && c.Err == nil {
			th.Truncated = c.Walk.Stop.String()
		}
		th.Frames = symbolizeStack(cache, imgs, c.PCs)
		snap.Threads = append(snap.Threads, th)
	}
	if len(snap.Threads) == 0 {
		if why := exited(cfg.PID); why != nil {
			return nil, why
		}
		err := fmt.Errorf("capture: every thread of PID %d ended before it was captured", cfg.PID)
		if capErr != nil {
			err = fmt.Errorf("%w: %w", err, capErr)
		}
		return nil, err
	}
	if capErr != nil {
		snap.Missing = append(snap.Missing, capErr.Error())
	}
	if cerr := <-detached; cerr != nil {
		snap.Missing = append(snap.Missing, "detach: "+cerr.Error())
	}
	snap.StoppedNS = stopped.Nanoseconds()
	return snap, nil
}

// detachingSnapshotter is implemented by backends that can let every
// thread go from the stop of its capture: a snapshot captures once, and
// detaching at Close would stop every thread a second time.
type detachingSnapshotter interface {
	CaptureAllAndDetach(dst []target.Capture) ([]target.Capture, error)
}

// expect gives cache every address the snapshot will symbolize, so that
// it reads of each object only the symbols that name them.
func expect(cache *symcache.Cache, imgs *images.Set, caps []target.Capture) {
	for _, c := range caps {
		for i, pc := range c.PCs {
			if im := imgs.Lookup(pc); im != nil {
				cache.Expect(im, pc, i > 0)
			}
		}
	}
}

// preload symbolizes, on a goroutine of its own, the first address each
// object of the stacks holds, which loads the objects' symbols (the
// expected ones, see expect) while the caller detaches; it returns at
// once. One goroutine, not one per CPU: on two CPUs loads side by side
// cost more CPU (runtime threads woken, spinning) than they save time.
func preload(cache *symcache.Cache, imgs *images.Set, caps []target.Capture) *sync.WaitGroup {
	type first struct {
		img    *images.Image
		pc     uint64
		caller bool
	}
	var objs []first
	seen := map[string]bool{}
	for _, c := range caps {
		for i, pc := range c.PCs {
			if im := imgs.Lookup(pc); im != nil && !seen[im.Key()] {
				seen[im.Key()] = true
				objs = append(objs, first{im, pc, i > 0})
			}
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, o := range objs {
			cache.Symbolize(o.img, o.pc, o.caller)
		}
	})
	return &wg
}

// symbolizeStack turns a captured stack into frames, expanding inlined
// calls where debug information has them. A return address is looked up in
// the image that holds it and symbolized at the call before it (symcache's
// caller flag), unlike exporter's resolver, which looks the image up at the
// address minus one too: the two differ only for a call that is the last
// instruction of an image.
func symbolizeStack(cache *symcache.Cache, imgs *images.Set, pcs []uint64) []Frame {
	out := make([]Frame, 0, len(pcs))
	for i, pc := range pcs {
		addr := "0x" + strconv.FormatUint(pc, 16)
		im := imgs.Lookup(pc)
		if im == nil {
			out = append(out, Frame{Address: addr})
			continue
		}
		for _, f := range cache.Symbolize(im, pc, i > 0) {
			out = append(out, Frame{
				Address:  addr,
				Image:    im.Name(),
				Function: snapshotFunction(f),
				Offset:   f.Offset,
				File:     f.File,
				Line:     f.Line,
				Inlined:  f.Inlined,
			})
		}
	}
	return out
}

// snapshotFunction is the frame's function name; an unnamed function with
// a known start is named image+0xSTART (its Offset is from that start).
func snapshotFunction(f symcache.Frame) string {
	if f.Anonymous {
		return f.Name()
	}
	return f.Function
}
