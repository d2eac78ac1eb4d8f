//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// Target is a Linux process being profiled through ptrace.
type Target struct {
	pid    int
	opts   target.Options
	walker *unwind.Walker

	reqs    chan *request
	done    chan struct{} // closed when the loop has exited
	hotMu   sync.Mutex    // guards hot, the reusable request
	hot     request
	closing sync.Once

	pubMem  sync.Mutex
	pubRead memReader // for ReadMemory from other goroutines

	statusMu   sync.Mutex
	exitStatus unix.WaitStatus
	exitKnown  bool

	// stateMu guards the thread table and exited flag: the loop goroutine
	// writes them under it (and reads them without it, being the only
	// writer); Threads and Info read them under it from other goroutines,
	// so they never wait for the tracer thread.
	stateMu sync.Mutex
	threads map[int]*thread
	exited  bool
	closed  bool
	infoBuf [256]byte
	pathBuf [64]byte  // for /proc paths built under stateMu
	capBuf  [512]byte // for captures on the caller's thread (under hotMu)
	// Continuous mode lists threads from /proc/PID/task on every Threads
	// call, through a directory kept open.
	taskDir  int
	listGen  uint64
	zombieAt time.Time // when a lone leader's state was last read
	dirBuf   [8192]byte

	// imgMu guards the image cache, which Images fills from any goroutine.
	imgMu    sync.Mutex
	imgSig   []images.Region
	imgSet   *images.Set
	buildIDs map[string]string

	// tracerTID is the tracer thread's id.
	tracerTID int

	// Continuous captures (under hotMu). stopTimer bounds the wait for a
	// stop. stuck holds the threads that did not stop in time: still
	// attached and interrupted, they stop when their uninterruptible
	// sleep ends, and are let go then; until then only the OS thread that
	// attached them can, so the capturing goroutine stays locked to it
	// (pinned) while any is stuck.
	stopTimer stopTimer
	stuck     map[int]*thread
	pinned    bool
	// checkStuck is the thread checkAccess attached that did not stop in
	// time; owned by the loop, which lets it go once it stops.
	checkStuck *thread
	// Kernel samples (KernelSamplePeriod, under hotMu): a walker that
	// reads nothing but the sample's stack copy (the thread has run on
	// since), buffers for one sample, and the first error opening a ring.
	perfWalker  *unwind.Walker
	perfRegBuf  [8]uint64
	perfHead    [64]byte
	perfDyn     [8]byte
	perfSample  perfSample
	perfOpenErr error
	perfSmall   error                                                                        // the first ring made small for want of locked memory
	openRing    func(tid int, period time.Duration, stackBytes int) (*perfRing, bool, error) // openPerfRing; tests replace it
	// ringIdle is how long a ring stays open without a sample
	// (ringIdleTimeout; tests shorten it).
	ringIdle time.Duration
	// ringsMayGrow: rings may grow their stack copies (growRing) only
	// where locked memory is not budgeted (CAP_IPC_LOCK): under a
	// user's budget, a few grown rings would leave none for new threads.
	ringsMayGrow bool
	// departed holds threads that exited with kernel samples not yet
	// drained (under stateMu): listed by Threads for two more listings,
	// so that the sampler drains them, then closed.
	departed map[int]*thread
	// skipBlockedCheck makes captures attach to threads in
	// uninterruptible sleep (tests: the race the check cannot close).
	skipBlockedCheck bool

	// Owned by the loop goroutine.
	gone      map[int]struct{} // tids dropped but perhaps not yet reaped
	execs     int
	regions   images.Regions
	regs      regsBuf
	walkMem   memReader
	sigch     chan os.Signal
	drainWant bool
	waitTimer *time.Timer
}

// Attach seizes every thread of process pid, including threads created
// while it attaches, and returns the Target. The process keeps running.
func Attach(pid int, opts target.Options) (*Target, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("invalid PID %d", pid)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		return nil, fmt.Errorf("no process with PID %d", pid)
	}
	opts = opts.WithDefaults()
	t := &Target{
		pid:      pid,
		opts:     opts,
		reqs:     make(chan *request),
		done:     make(chan struct{}),
		threads:  make(map[int]*thread),
		gone:     make(map[int]struct{}),
		buildIDs: make(map[string]string),
		stuck:    make(map[int]*thread),
		departed: make(map[int]*thread),
		sigch:    make(chan os.Signal, 1),
		taskDir:  -1,
	}
	t.pubRead.pid = pid
	t.walkMem.pid = pid
	w, err := unwind.NewWalker(unwind.Config{Arch: nativeArch, MaxFrames: opts.MaxFrames, Fallback: &t.walkMem})
	if err != nil {
		return nil, err
	}
	t.walker = w
	if opts.KernelSamplePeriod > 0 && opts.Continuous {
		if t.perfWalker, err = unwind.NewWalker(unwind.Config{Arch: nativeArch, MaxFrames: opts.MaxFrames}); err != nil {
			return nil, err
		}
		t.openRing = openPerfRing
		t.ringIdle = ringIdleTimeout
		t.ringsMayGrow = canLockMemory()
	}
	t.hot.reply = make(chan struct{}, 1)
	ready := make(chan error, 1)
	go t.loop(ready)
	if err := <-ready; err != nil {
		<-t.done
		return nil, err
	}
	return t, nil
}

// ExitStatus returns the process's wait status if the tracer reaped it
// (the tracer sees the exit of a traced child before its parent does).
func (t *Target) ExitStatus() (syscall.WaitStatus, bool) {
	t.statusMu.Lock()
	defer t.statusMu.Unlock()
	return syscall.WaitStatus(t.exitStatus), t.exitKnown
}

// Executable returns the path of the process's executable.
func (t *Target) Executable() string {
	p, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", t.pid))
	return p
}

// PID returns the process id.
func (t *Target) PID() int { return t.pid }

// Arch returns the architecture of the target (the profiler's own: ptrace
// cannot read registers of a foreign architecture).
func (t *Target) Arch() unwind.Arch { return nativeArch }

// Walker returns the walker the target uses during captures.
func (t *Target) Walker() *unwind.Walker { return t.walker }

// Exited reports whether the target process has exited.
func (t *Target) Exited() bool {
	select {
	case <-t.done:
		return true
	default:
	}
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	return t.exited
}

// Threads appends the ids of the target's threads, in ascending order. It
// does not wait for the tracer thread.
func (t *Target) Threads(dst []target.ThreadID) ([]target.ThreadID, error) {
	dst = dst[:0]
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	switch {
	case t.closed:
		return dst, target.ErrClosed
	case t.exited:
		return dst, target.ErrExited
	}
	if t.opts.Continuous {
		if err := t.refreshThreads(); err != nil {
			return dst, err
		}
	}
	for tid := range t.threads {
		dst = append(dst, target.ThreadID(tid))
	}
	for tid := range t.departed {
		dst = append(dst, target.ThreadID(tid))
	}
	slices.Sort(dst)
	return dst, nil
}

// Info returns a thread's name, CPU time and state. It reads /proc and does
// not wait for the tracer thread.
func (t *Target) Info(id target.ThreadID) (target.ThreadInfo, error) {
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	if t.closed {
		return target.ThreadInfo{}, target.ErrClosed
	}
	return t.info(int(id))
}

// CaptureBatch captures the given threads one after another (each stopped
// only for its own capture) in a single request to the tracer thread,
// filling caps[i] for ids[i] and errs[i] with its error. It saves a
// round trip between goroutines per thread, which on a busy machine costs
// more than the capture itself.
func (t *Target) CaptureBatch(ids []target.ThreadID, caps []*target.Capture, errs []error) {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	if t.opts.Continuous {
		// Each thread is attached only for its capture, so any thread
		// can be the tracer: capture here, on the caller's own OS thread,
		// without a round trip to the tracer goroutine.
		runtime.LockOSThread()
		defer t.unlockOSThread()
		t.stateMu.Lock()
		closed := t.closed
		t.stateMu.Unlock()
		t.tendStuck()
		for i, id := range ids {
			if closed {
				errs[i] = target.ErrClosed
				continue
			}
			errs[i] = t.captureContinuous(int(id), caps[i])
		}
		return
	}
	r := &t.hot
	r.op, r.tids, r.batch, r.errs, r.err = opCaptureBatch, ids, caps, errs, nil
	t.call(r)
	if r.err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = r.err
			}
		}
	}
	r.tids, r.batch, r.errs = nil, nil, nil
}

// Capture stops one thread, captures and walks its stack, and resumes it.
func (t *Target) Capture(id target.ThreadID, c *target.Capture) error {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	if t.opts.Continuous {
		runtime.LockOSThread()
		defer t.unlockOSThread()
		t.tendStuck()
		return t.captureContinuous(int(id), c)
	}
	r := &t.hot
	r.op, r.tid, r.capture, r.err = opCapture, int(id), c, nil
	t.call(r)
	r.capture = nil
	return r.err
}

// CaptureAll stops every thread, captures each, then resumes them all.
func (t *Target) CaptureAll(dst []target.Capture) ([]target.Capture, error) {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	r := &t.hot
	r.op, r.captures, r.err = opCaptureAll, dst, nil
	t.call(r)
	out := r.captures
	r.captures = nil
	return out, r.err
}

// Images returns the executable mappings of the target as images. It
// returns the same *Set as long as the mappings do not change, and does not
// wait for the tracer thread.
func (t *Target) Images() (*images.Set, error) {
	t.imgMu.Lock()
	defer t.imgMu.Unlock()
	return t.images()
}

// ReadMemory reads the target's memory. It may be called from any
// goroutine.
func (t *Target) ReadMemory(addr uint64, dst []byte) error {
	t.pubMem.Lock()
	defer t.pubMem.Unlock()
	if err := t.pubRead.ReadMemory(addr, dst); err != nil {
		return fmt.Errorf("read %d bytes at %#x of PID %d: %w", len(dst), addr, t.pid, err)
	}
	return nil
}

// Close resumes every thread and detaches. It is safe to call more than
// once and from any goroutine.
func (t *Target) Close() error {
	var err error
	t.closing.Do(func() {
		if t.opts.Continuous {
			// Captures run on their callers' goroutines in this mode:
			// none may use a thread's files or ring while they close.
			t.hotMu.Lock()
			defer t.hotMu.Unlock()
			t.letGoStuck()
		}
		r := t.call(&request{op: opClose})
		if !errors.Is(r.err, target.ErrClosed) {
			err = r.err
		}
		<-t.done
		// Wait until the tracer thread is gone, and with it every
		// remaining trace link.
		if t.tracerTID != os.Getpid() {
			task := fmt.Sprintf("/proc/self/task/%d", t.tracerTID)
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
				if _, serr := os.Stat(task); serr != nil {
					break
				}
			}
		}
	})
	return err
}
