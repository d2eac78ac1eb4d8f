package agent

import (
	"context"
	"errors"
	"os"
	"regexp"
	"time"

	"github.com/macprof/macprof/target"
)

// Process is one process of the system, for matching against Config.Name.
type Process struct {
	PID int
	// UID is the user the process runs as, when HasUID is set: its real,
	// effective and saved user ids are all UID.
	UID    int
	HasUID bool
	// Names are its short name and, where known, its executable's base
	// name.
	Names   []string
	Cmdline string
}

// matches reports whether a name of p, or its command line, matches re.
func (p Process) matches(re *regexp.Regexp) bool {
	for _, n := range p.Names {
		if re.MatchString(n) {
			return true
		}
	}
	return p.Cmdline != "" && re.MatchString(p.Cmdline)
}

// maxFailed bounds the set of processes the watcher gave up on; past it the
// set starts again.
const maxFailed = 4096

// watcher attaches to the processes that match Config.Name as they appear.
type watcher struct {
	a      *agent
	self   int
	list   func() []Process
	failed map[int]bool
}

// scan attaches to every matching process not profiled yet.
func (w *watcher) scan() {
	for _, p := range w.list() {
		if p.PID == w.self || w.failed[p.PID] || w.a.targets.has(p.PID) || !p.matches(w.a.cfg.Name) {
			continue
		}
		if !p.HasUID || p.UID != w.a.cfg.UID {
			// Another user's process, whatever it calls itself: its
			// stacks would go out under this user's service names.
			continue
		}
		if err := w.a.attach(p.PID, &w.a.cfg.UID); err != nil {
			// Once per process: it may be gone already, or not ours
			// to trace; either way, no noise every rescan. One that
			// exited (a zombie the list still showed, after its
			// profile was dropped) is no news.
			w.failed[p.PID] = true
			if errors.Is(err, target.ErrExited) {
				w.a.log.Debug("matching process exited before it could be profiled", "pid", p.PID, "err", err)
				continue
			}
			w.a.log.Warn("cannot profile matching process", "pid", p.PID, "err", err)
		}
	}
	if len(w.failed) > maxFailed {
		clear(w.failed)
	}
}

// watchNames attaches to processes matching Config.Name, now and every
// Rescan, until ctx ends.
func (a *agent) watchNames(ctx context.Context) {
	w := &watcher{a: a, self: os.Getpid(), list: a.cfg.ListProcesses, failed: map[int]bool{}}
	if w.list == nil {
		w.list = listProcesses
	}
	w.scan()
	t := time.NewTicker(a.cfg.Rescan)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.scan()
		}
	}
}
