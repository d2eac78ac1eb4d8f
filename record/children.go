package record

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/sampler"
	"github.com/macprof/macprof/target"
)

// recording holds the targets of one record run.
type recording struct {
	s        *sampler.Sampler
	opts     target.Options
	attachFn func(pid int, o target.Options) (target.Target, error)
	mu       sync.Mutex
	ts       []target.Target
	pids     map[int]bool
	closed   bool // closeAll ran: a target added later is closed at once
	intr     interruption

	// Following a launched command's children (sampler goroutine only).
	root        target.Target                   // the launched command; nil when attached with -p or once it exited
	descendants func(root int, dst []int) []int // finds its descendants; nil follows none
	kids        []int                           // the last list of them
	failed      map[int]bool                    // descendants that could not be attached
	polled      time.Duration                   // recording time of the last look
}

// attach attaches to pid and adds it; started says it started during the
// recording (a descendant of the launched command), so that all of its CPU
// time is counted.
func (r *recording) attach(pid int, started bool) error {
	t, err := r.attachFn(pid, r.opts)
	if err != nil {
		return err
	}
	r.add(t, started)
	return nil
}

func (r *recording) add(t target.Target, started bool) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		t.Close()
		return
	}
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
	if r.root == nil || r.descendants == nil || elapsed-r.polled < childPollInterval*9/10 {
		return
	}
	r.polled = elapsed
	if e, ok := r.root.(target.ExitReporter); ok && e.Exited() {
		// Its PID may be reused by an unrelated process: stop here.
		r.root = nil
		return
	}
	if d, ok := r.root.(target.DescendantSampler); ok && d.SamplesDescendants() {
		// Its samples hold its descendants' already.
		return
	}
	r.kids = r.descendants(r.root.PID(), r.kids)
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
	r.closed = true
	for _, t := range r.ts {
		t.Close()
	}
}

// attachedCPU returns the CPU time the process given by -p used so far, all
// its threads' (ok false when want is false, the target cannot tell, or
// the process is gone).
func (r *recording) attachedCPU(want bool) (time.Duration, bool) {
	if !want {
		return 0, false
	}
	r.mu.Lock()
	var t target.Target
	if len(r.ts) > 0 {
		t = r.ts[0]
	}
	r.mu.Unlock()
	pc, ok := t.(target.ProcessCPUReporter)
	if !ok {
		return 0, false
	}
	d, err := pc.ProcessCPU()
	return d, err == nil
}

// writeProcessShare says what share of used, the CPU time process pid
// (given by -p) used while it was recorded, the profile w holds at period a
// sample; nothing when used is unknown (0) or w is a wall profile.
func writeProcessShare(out io.Writer, w *profile.Window, period time.Duration, pid int, used time.Duration) {
	if w.Mode == profile.ModeWall || used <= 0 {
		return
	}
	if w.SampleCount() == 0 {
		fmt.Fprintf(out, "macprof: the profile holds no samples: process %d used %s of CPU time while recorded (by the kernel's count)%s\n",
			pid, used.Round(time.Microsecond), belowPeriod(used, period))
		return
	}
	held := time.Duration(w.SampleCount()) * period
	fmt.Fprintf(out, "macprof: the profile holds %s of the %s of CPU time process %d used while recorded (%.1f%%, by the kernel's count)\n",
		held.Round(time.Millisecond), used.Round(time.Millisecond), pid, 100*float64(held)/float64(used))
}

// belowPeriod says, for a profile without samples of a run that used cpu,
// when that is less than a sampling period, what to do about it.
func belowPeriod(cpu, period time.Duration) string {
	if cpu >= period {
		return ""
	}
	return fmt.Sprintf(", less than one sampling period (%s): record at a higher -F to sample so short a run", period.Round(time.Microsecond))
}

// writeTreeShare says what share of tree, the CPU time the launched
// command and the descendants it waited for used (their rusage), the
// profile w holds at period a sample; nothing when tree is unknown (0).
// Samples of processes the command did not wait for are in the profile but
// not in tree, so a share above 100% is possible. A wall profile's samples
// are no CPU time: writeWallShare says what it holds instead.
func writeTreeShare(out io.Writer, w *profile.Window, period, tree time.Duration) {
	if w.Mode == profile.ModeWall {
		writeWallShare(out, w, period)
		return
	}
	if tree <= 0 {
		return
	}
	if w.SampleCount() == 0 {
		fmt.Fprintf(out, "macprof: the profile holds no samples: the command and the children it waited for used %s of CPU time (rusage)%s\n",
			tree.Round(time.Microsecond), belowPeriod(tree, period))
		return
	}
	held := time.Duration(w.SampleCount()) * period
	pids := map[int]bool{}
	for _, s := range w.Samples {
		pids[s.PID] = true
	}
	procs := "processes"
	if len(pids) == 1 {
		procs = "process"
	}
	fmt.Fprintf(out, "macprof: the profile holds %s of the %s of CPU time the command and the children it waited for used (%.1f%%, rusage), in %d %s\n",
		held.Round(time.Millisecond), tree.Round(time.Millisecond), 100*float64(held)/float64(tree), len(pids), procs)
}
