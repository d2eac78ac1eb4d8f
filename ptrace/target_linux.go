//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// traceOptions are set on every seized thread: follow new threads and report
// exec. PTRACE_O_EXITKILL is deliberately absent, so that a profiler that
// dies leaves its target running.
const traceOptions = unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_TRACEEXEC

// tracerNice is the nice value the tracer thread asks for.
const tracerNice = -10

// stopTimeout bounds how long a capture waits for one thread to stop.
const stopTimeout = 250 * time.Millisecond

// continuousStopTimeout bounds the same wait in continuous mode, where the
// sampler waits with it and every other thread's sample waits too: five
// ticks at 99 Hz, and hundreds of times the slowest stop measured on a
// loaded machine (a few milliseconds).
const continuousStopTimeout = 50 * time.Millisecond

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

type thread struct {
	tid int
	// held is true while the thread sits in a ptrace-stop that we consumed
	// with wait4 and have not resumed yet.
	held       bool
	gen        uint64 // listing generation that last saw the thread (continuous mode)
	heldSig    int    // signal to inject when resuming (signal-delivery-stop)
	tracer     int    // OS thread that attached it, while stuck (continuous mode)
	groupStop  bool   // the stop is a group-stop: resume with PTRACE_LISTEN
	files      threadFiles
	name       string
	nameAt     time.Time
	lastCPU    time.Duration // CPU time at the previous Info call
	copyBytes  int           // bytes of stack to copy in continuous mode; 0 means initialStackCopy
	ring       *perfRing     // its kernel sample ring (KernelSamplePeriod), once opened
	noRing     bool          // the ring could not be opened: capture by stopping it
	ringStack  int           // the stack bytes its ring's samples copy
	ringFull   bool          // ringStack cannot grow (at its limit, or refused)
	ranOff     bool          // a walk of a sample in its ring ran past the stack copy
	lastSample time.Time     // when its ring was opened or last had a sample
}

// closeFiles closes what is open for the thread.
func (th *thread) closeFiles() {
	th.files.close()
	if th.ring != nil {
		th.ring.close()
		th.ring = nil
	}
}

type opcode uint8

const (
	opThreads opcode = iota + 1
	opInfo
	opCapture
	opCaptureAll
	opCaptureBatch
	opClose
)

type request struct {
	op       opcode
	tid      int
	capture  *target.Capture
	captures []target.Capture
	tids     []target.ThreadID
	batch    []*target.Capture
	errs     []error
	err      error
	reply    chan struct{}
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

func (t *Target) call(r *request) *request {
	if r.reply == nil {
		r.reply = make(chan struct{}, 1)
	}
	select {
	case t.reqs <- r:
		<-r.reply
	case <-t.done:
		r.err = target.ErrClosed
	}
	return r
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

// loop owns the tracer thread.
func (t *Target) loop(ready chan<- error) {
	// The goroutine stays locked until it exits; the runtime then ends the
	// OS thread, and the kernel detaches whatever tracee is left.
	runtime.LockOSThread()
	defer close(t.done)
	t.tracerTID = unix.Gettid()
	t.waitTimer = time.NewTimer(time.Hour)
	t.waitTimer.Stop()
	// While a target's threads are stopped they wait for this thread; let
	// it win the CPU against the target's own busy threads when the
	// system allows (root or CAP_SYS_NICE). The setting is per thread.
	unix.Setpriority(unix.PRIO_PROCESS, t.tracerTID, tracerNice)
	defer holdStopSignals(t.opts.Continuous)()
	if !t.opts.Continuous {
		// Persistent mode services unsolicited stops when SIGCHLD says
		// there are some. Continuous mode waits for each stop in wait4 and
		// leaves nothing attached between captures: it needs no
		// notification, and each one would wake a goroutine per capture.
		signal.Notify(t.sigch, syscall.SIGCHLD)
		defer signal.Stop(t.sigch)
	}

	attachFn := t.attachAll
	if t.opts.Continuous {
		attachFn = t.checkAccess
	}
	if err := attachFn(); err != nil {
		t.detachAll()
		ready <- err
		return
	}
	ready <- nil
	drainTimer := time.NewTimer(time.Hour)
	drainTimer.Stop()
	lastDrain := time.Time{}
	const drainEvery = 0
	for {
		if t.letGoCheckStuck() {
			drainTimer.Reset(10 * time.Millisecond)
		}
		select {
		case r := <-t.reqs:
			t.handle(r)
			closing := r.op == opClose
			r.reply <- struct{}{} // r belongs to the caller from here on
			if closing {
				return
			}
		case <-t.sigch:
			t.drainWant = true
		case <-drainTimer.C:
		}
		if t.drainWant {
			if since := time.Since(lastDrain); since >= drainEvery {
				t.drain()
				lastDrain = time.Now()
			} else {
				drainTimer.Reset(drainEvery - since)
			}
		}
	}
}

func (t *Target) handle(r *request) {
	if r.op == opClose {
		if t.tracerTID == os.Getpid() && !t.opts.Continuous {
			// The main thread is never ended by the runtime, so nothing
			// would detach what is left: detach every thread here. (In
			// continuous mode this thread holds none attached: it
			// would interrupt threads it does not trace, take them for
			// gone and reap the process if it is our child, so the
			// status launch mode forwards would be lost.)
			r.err = t.detachAll()
		} else {
			// Detach only the threads held now; the others are detached
			// by the kernel, without stopping them again, when this
			// thread exits (the loop returns while locked to it).
			r.err = t.detachHeld()
		}
		t.stateMu.Lock()
		t.closed = true
		if t.taskDir >= 0 {
			unix.Close(t.taskDir)
			t.taskDir = -1
		}
		t.stateMu.Unlock()
		return
	}
	if t.exited {
		r.err = target.ErrExited
		return
	}
	switch r.op {
	case opCapture:
		r.err = t.capture(r.tid, r.capture)
	case opCaptureBatch:
		for i, id := range r.tids {
			r.errs[i] = t.capture(int(id), r.batch[i])
		}
	case opCaptureAll:
		r.captures, r.err = t.captureAll(r.captures)
	}
}

// attachAll seizes every thread, re-listing until no new thread appears.
func (t *Target) attachAll() error {
	for round := 0; ; round++ {
		tids, err := listTasks(t.pid)
		if err != nil {
			return fmt.Errorf("list threads of PID %d: %w", t.pid, err)
		}
		added := 0
		for _, tid := range tids {
			if _, ok := t.threads[tid]; ok {
				continue
			}
			if err := seize(tid, traceOptions); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // the thread exited meanwhile
				}
				if errors.Is(err, unix.EPERM) && len(t.threads) > 0 && t.tracedByUs(tid) {
					// Auto-attached through PTRACE_O_TRACECLONE already.
					t.addThread(tid)
					added++
					continue
				}
				if len(t.threads) == 0 {
					return attachError(t.pid, err)
				}
				return fmt.Errorf("attach thread %d of PID %d: %w", tid, t.pid, err)
			}
			t.addThread(tid)
			added++
		}
		if added == 0 {
			break
		}
		if round > 1000 {
			return fmt.Errorf("attach PID %d: threads keep appearing faster than they can be attached", t.pid)
		}
	}
	if len(t.threads) == 0 {
		return fmt.Errorf("PID %d has no threads left to attach (it exited)", t.pid)
	}
	// Service whatever happened while attaching (new threads' first stops).
	t.drain()
	return nil
}

// tracedByUs reports whether tid's tracer is a thread of this process
// (TracerPid names the tracing thread, not its process).
func (t *Target) tracedByUs(tid int) bool {
	v, err := procStatusField(tid, "TracerPid")
	return err == nil && tracerProcess(v) == os.Getpid()
}

func (t *Target) addThread(tid int) *thread {
	if th, ok := t.threads[tid]; ok {
		return th
	}
	th := &thread{tid: tid, files: openThreadFiles(t.pid, tid)}
	t.stateMu.Lock()
	t.threads[tid] = th
	t.stateMu.Unlock()
	delete(t.gone, tid)
	return th
}

func (t *Target) dropThread(tid int, reaped bool) {
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	if th, ok := t.threads[tid]; ok {
		th.closeFiles()
		delete(t.threads, tid)
	}
	if !reaped {
		if len(t.gone) < 4096 {
			t.gone[tid] = struct{}{}
		}
	} else {
		delete(t.gone, tid)
	}
	if tid == t.pid && reaped || len(t.threads) == 0 {
		t.exited = true
	}
}

// drain consumes every pending state change of the tracees and resumes
// them. It costs one waitid when nothing is pending.
func (t *Target) drain() {
	t.drainWant = false
	if t.opts.Continuous {
		// Nothing stays attached between captures: nothing to service.
		return
	}
	for i := 0; i < 100000; i++ {
		pid, err := peekWaitable()
		if err != nil || pid == 0 {
			return
		}
		_, ours := t.threads[pid]
		_, wasOurs := t.gone[pid]
		if !ours && !wasOurs {
			// A child that is not ours to reap: fall back to asking each
			// tracee in turn.
			t.drainEach()
			return
		}
		if !t.waitOne(pid, unix.WNOHANG) {
			return
		}
	}
}

// drainEach polls each tracee with WNOHANG.
func (t *Target) drainEach() {
	for pass := 0; pass < 16; pass++ {
		progress := false
		for tid := range t.threads {
			if t.threads[tid].held {
				continue
			}
			if t.waitOne(tid, unix.WNOHANG) {
				progress = true
			}
		}
		for tid := range t.gone {
			if t.waitOne(tid, unix.WNOHANG) {
				progress = true
			}
		}
		if !progress {
			return
		}
	}
}

// waitOne consumes one state change of tid (blocking unless WNOHANG is in
// options) and handles it: unsolicited stops are resumed at once, and a
// stop of a thread we are capturing is left held. It reports whether a
// change was consumed.
func (t *Target) waitOne(tid int, options int) bool {
	var ws unix.WaitStatus
	got, err := unix.Wait4(tid, &ws, options|unix.WALL, nil)
	if err != nil {
		if errors.Is(err, unix.ECHILD) {
			t.dropThread(tid, true)
		}
		return false
	}
	if got == 0 {
		return false
	}
	t.handleStatus(got, ws, false)
	return true
}

// handleStatus acts on one wait status. When keep is true a stop is left
// held for the caller to capture and resume; otherwise it is resumed.
func (t *Target) handleStatus(tid int, ws unix.WaitStatus, keep bool) {
	switch {
	case ws.Exited() || ws.Signaled():
		if tid == t.pid {
			t.statusMu.Lock()
			t.exitStatus, t.exitKnown = ws, true
			t.statusMu.Unlock()
		}
		t.dropThread(tid, true)
		return
	case !ws.Stopped():
		return
	}
	th, ok := t.threads[tid]
	if !ok {
		// A thread we have not heard of: auto-attached through a clone
		// whose event we have not seen yet.
		th = t.addThread(tid)
	}
	th.held, th.heldSig, th.groupStop = true, 0, false
	sig := ws.StopSignal()
	switch ev := ws.TrapCause(); {
	case sig == unix.SIGTRAP && ev == unix.PTRACE_EVENT_CLONE:
		if msg, err := unix.PtraceGetEventMsg(tid); err == nil {
			t.addThread(int(msg))
		}
	case sig == unix.SIGTRAP && ev == unix.PTRACE_EVENT_EXEC:
		t.onExec(tid)
		th = t.threads[tid]
	case ev == unix.PTRACE_EVENT_STOP:
		// An interrupt or a new thread's first stop (SIGTRAP), or a
		// group-stop (the stop signal).
		if sig != unix.SIGTRAP {
			th.groupStop = true
		}
	case ev == 0:
		// Signal-delivery-stop: the signal is re-injected on resume.
		th.heldSig = int(sig)
	}
	if !keep {
		t.resume(th)
	}
}

// resume lets a held thread run again.
func (t *Target) resume(th *thread) {
	if th == nil || !th.held {
		return
	}
	var err error
	if th.groupStop {
		err = listen(th.tid)
	} else {
		err = cont(th.tid, th.heldSig)
	}
	th.held, th.heldSig, th.groupStop = false, 0, false
	if errors.Is(err, unix.ESRCH) {
		t.dropThread(th.tid, false)
	}
}

// onExec handles PTRACE_EVENT_EXEC: every other thread is gone and the
// images changed.
func (t *Target) onExec(tid int) {
	t.execs++
	for other := range t.threads {
		if other != tid {
			t.dropThread(other, false)
		}
	}
	t.regions = nil
	t.imgMu.Lock()
	t.imgSig, t.imgSet = nil, nil
	t.imgMu.Unlock()
	t.stateMu.Lock()
	t.exited = false
	t.stateMu.Unlock()
}

// stop interrupts a thread and waits until it is held in a ptrace-stop.
func (t *Target) stop(th *thread) error {
	if th.held {
		return nil
	}
	if err := interrupt(th.tid); err != nil {
		if errors.Is(err, unix.ESRCH) {
			t.dropThread(th.tid, false)
			return fmt.Errorf("thread %d: %w", th.tid, target.ErrNoThread)
		}
		return fmt.Errorf("interrupt thread %d: %w", th.tid, err)
	}
	return t.awaitHeld(th, time.Now().Add(stopTimeout))
}

// awaitHeld waits until th is held, servicing nothing else.
func (t *Target) awaitHeld(th *thread, deadline time.Time) error {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(th.tid, &ws, unix.WNOHANG|unix.WALL, nil)
		if err != nil {
			t.dropThread(th.tid, errors.Is(err, unix.ECHILD))
			return fmt.Errorf("thread %d: %w", th.tid, target.ErrNoThread)
		}
		if got != 0 {
			t.handleStatus(got, ws, true)
			if t.threads[th.tid] != th {
				return fmt.Errorf("thread %d: %w", th.tid, target.ErrNoThread)
			}
			if th.held {
				return nil
			}
			continue
		}
		// Not stopped yet: sleep until SIGCHLD says some tracee changed
		// state (no busy polling, which would take the CPU the thread
		// needs to reach its stop), or until the deadline.
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("thread %d: %w", th.tid, target.ErrStopTimeout)
		}
		t.waitTimer.Reset(left)
		select {
		case <-t.sigch:
			// The change may be another tracee's: let the loop drain.
			t.drainWant = true
		case <-t.waitTimer.C:
		}
		t.waitTimer.Stop()
	}
}

// capture stops, captures and resumes one thread.
func (t *Target) capture(tid int, c *target.Capture) error {
	if t.opts.Continuous {
		return t.captureTransient(tid, c)
	}
	th, ok := t.threads[tid]
	if !ok {
		return fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
	}
	start := time.Now()
	if err := t.stop(th); err != nil {
		if errors.Is(err, target.ErrStopTimeout) && t.dying(th) {
			t.dropThread(tid, false)
			err = fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
		}
		if t.exited {
			return target.ErrExited
		}
		return err
	}
	err := t.captureHeld(th, c)
	t.resume(th)
	c.Stopped = time.Since(start)
	return err
}

// dying reports whether a thread that would not stop is exiting: gone from
// /proc, a zombie, or dead.
func (t *Target) dying(th *thread) bool {
	var buf [256]byte
	st, err := th.files.state(buf[:])
	if err != nil || st == 'Z' || st == 'X' || st == 'x' {
		return true
	}
	_, err = os.Stat(fmt.Sprintf("/proc/%d/task/%d", t.pid, th.tid))
	return err != nil
}

// captureHeld reads registers, copies the stack and walks it, for a held
// thread.
func (t *Target) captureHeld(th *thread, c *target.Capture) error {
	c.Thread = target.ThreadID(th.tid)
	c.PCs = c.PCs[:0]
	c.Stack = c.Stack[:0]
	c.StackBase = 0
	c.Walk = unwind.Result{}
	c.Err = nil
	regs, err := getRegs(th.tid, &t.regs)
	if err != nil {
		return fmt.Errorf("read registers of thread %d: %w", th.tid, err)
	}
	c.Regs = regs
	lo, hi, ok := t.stackBounds(regs.SP)
	if !ok {
		// No region holds SP: walk nothing but the PC.
		lo, hi = regs.SP, regs.SP
	}
	// The copy starts a little below SP: Go on arm64 keeps the innermost
	// frame record at SP-8.
	from := regs.SP
	if nativeArch == unwind.ArchARM64 && from-16 >= lo && from >= 16 {
		from -= 16
	}
	n := hi - from
	if hi < from {
		n = 0
	}
	n = min(n, uint64(th.copyLimit(cap(c.Stack), t.opts.Continuous)))
	if n > 0 {
		buf := c.Stack[:n]
		got, err := t.walkMem.readSome(from, buf)
		if err == nil && got > 0 {
			c.Stack = buf[:got]
			c.StackBase = from
		}
	}
	st := unwind.Stack{Base: c.StackBase, Data: c.Stack, Lo: lo, Hi: hi}
	c.PCs, c.Walk = t.walker.Walk(regs, &st, c.PCs)
	if c.Walk.FallbackReads > 0 {
		th.growCopy(cap(c.Stack))
	}
	return nil
}

// initialStackCopy is the first bulk copy of a thread's stack in continuous
// mode. Most stacks (goroutines, callbacks, worker loops) fit in it, and a
// smaller copy keeps the thread stopped for less time: the copy grows for
// threads whose walks go further.
const initialStackCopy = 8 << 10

// copyLimit returns how many bytes of the thread's stack to copy, at most
// max. A snapshot copies all it may; continuous sampling starts with
// initialStackCopy and grows it for this thread when a walk had to read
// past the copy.
func (th *thread) copyLimit(max int, continuous bool) int {
	if !continuous {
		return max
	}
	return min(th.stackCopy(), max)
}

// growCopy doubles the thread's stack copy, up to max, after a walk that
// read frame records past it.
func (th *thread) growCopy(max int) { th.copyBytes = min(2*th.stackCopy(), max) }

// stackCopy is the thread's current stack copy size in continuous mode.
func (th *thread) stackCopy() int {
	if th.copyBytes == 0 {
		return initialStackCopy
	}
	return th.copyBytes
}

// stackBounds returns the bounds of the mapping that holds sp, re-reading
// the memory map once if the cached one has no such mapping.
func (t *Target) stackBounds(sp uint64) (lo, hi uint64, ok bool) {
	if lo, hi, ok = t.regions.StackBounds(sp); ok {
		return lo, hi, true
	}
	if err := t.readRegions(); err != nil {
		return 0, 0, false
	}
	return t.regions.StackBounds(sp)
}

func (t *Target) readRegions() error {
	regs, err := readRegions(t.pid)
	if err != nil {
		return err
	}
	t.regions = regs
	return nil
}

func readRegions(pid int) (images.Regions, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, fmt.Errorf("read memory map of PID %d: %w", pid, err)
	}
	defer f.Close()
	regs, err := images.ParseProcMaps(f)
	if err != nil {
		return nil, fmt.Errorf("read memory map of PID %d: %w", pid, err)
	}
	return regs, nil
}

// captureAll stops every thread, then captures each, then resumes all.
func (t *Target) captureAll(dst []target.Capture) ([]target.Capture, error) {
	dst = dst[:0]
	tids := make([]int, 0, len(t.threads))
	for tid := range t.threads {
		tids = append(tids, tid)
	}
	sort.Ints(tids)
	start := time.Now()
	// Interrupt them all first so that they stop together.
	for _, tid := range tids {
		th := t.threads[tid]
		if th == nil || th.held {
			continue
		}
		if err := interrupt(tid); err != nil && errors.Is(err, unix.ESRCH) {
			t.dropThread(tid, false)
		}
	}
	deadline := time.Now().Add(stopTimeout)
	var held []*thread
	for _, tid := range tids {
		i := len(dst)
		if cap(dst) > i {
			dst = dst[:i+1]
		} else {
			dst = append(dst, target.Capture{})
		}
		c := &dst[i]
		if c.PCs == nil {
			c.PCs = make([]uint64, 0, t.opts.MaxFrames)
		}
		if c.Stack == nil {
			c.Stack = make([]byte, 0, t.opts.StackBytes)
		}
		c.Thread = target.ThreadID(tid)
		c.Err = nil
		th := t.threads[tid]
		if th == nil {
			c.Err = fmt.Errorf("thread %d exited during the capture", tid)
			continue
		}
		if err := t.awaitHeld(th, deadline); err != nil {
			c.Err = err
			continue
		}
		held = append(held, th)
		if err := t.captureHeld(th, c); err != nil {
			c.Err = err
		}
	}
	for _, th := range held {
		t.resume(th)
	}
	stopped := time.Since(start)
	for i := range dst {
		dst[i].Stopped = stopped
	}
	// New threads that appeared meanwhile are now traced; their first
	// stops are serviced by the next drain.
	t.drain()
	if t.exited && len(held) == 0 {
		return dst, target.ErrExited
	}
	return dst, nil
}

// info reads a thread's CPU time, state and (at most once a second) name.
func (t *Target) info(tid int) (target.ThreadInfo, error) {
	th, ok := t.threads[tid]
	if !ok {
		if th, ok := t.departed[tid]; ok {
			// Gone, with samples still to drain: as it last was.
			return target.ThreadInfo{ID: target.ThreadID(tid), Name: th.name, CPUTime: th.lastCPU}, nil
		}
		return target.ThreadInfo{}, fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
	}
	cpu, err := th.files.cpuTime(t.infoBuf[:])
	if err != nil {
		return target.ThreadInfo{ID: target.ThreadID(tid)}, fmt.Errorf("thread %d: CPU time: %w", tid, err)
	}
	// The state letter would cost a read of /proc/.../stat, the most
	// expensive file here, on every tick: running means "used CPU since
	// the previous call" instead.
	running := cpu != th.lastCPU
	th.lastCPU = cpu
	if now := time.Now(); th.name == "" || now.Sub(th.nameAt) > time.Second {
		t.readThreadName(th)
		th.nameAt = now
	}
	return target.ThreadInfo{ID: target.ThreadID(tid), Name: th.name, CPUTime: cpu, Running: running}, nil
}

// readThreadName refreshes th.name from /proc/PID/task/TID/comm. It
// allocates only when the name changed. The caller holds stateMu.
func (t *Target) readThreadName(th *thread) {
	p := append(t.pathBuf[:0], "/proc/"...)
	p = strconv.AppendInt(p, int64(t.pid), 10)
	p = append(p, "/task/"...)
	p = strconv.AppendInt(p, int64(th.tid), 10)
	p = append(p, "/comm\x00"...)
	n, err := readFileRaw(p, t.infoBuf[:])
	if err != nil {
		return
	}
	if name := bytes.TrimRight(t.infoBuf[:n], "\n"); len(name) > 0 && string(name) != th.name {
		th.name = string(name)
	}
}

// images re-reads the memory map and returns the executable file mappings.
// The caller holds imgMu.
func (t *Target) images() (*images.Set, error) {
	regions, err := readRegions(t.pid)
	if err != nil {
		if _, serr := os.Stat(fmt.Sprintf("/proc/%d", t.pid)); serr != nil {
			return nil, target.ErrExited
		}
		return nil, err
	}
	var sig []images.Region
	for _, r := range regions {
		if r.Executable() && r.Path != "" {
			sig = append(sig, r)
		}
	}
	if len(sig) == 0 {
		// A live process has at least its executable mapped; an empty map
		// is a process tearing down its address space.
		return nil, target.ErrExited
	}
	if t.imgSet != nil && sameRegions(sig, t.imgSig) {
		return t.imgSet, nil
	}
	imgs := regions.ELFImages()
	root := fmt.Sprintf("/proc/%d/root", t.pid)
	for _, im := range imgs {
		if im.Path == "[vdso]" {
			im.Memory = &lockedReader{t: t}
			continue
		}
		im.OpenPath = root + im.Path
		id, ok := t.buildIDs[im.OpenPath]
		if !ok {
			id, _ = images.ELFBuildID(im.OpenPath)
			t.buildIDs[im.OpenPath] = id
		}
		im.BuildID = id
	}
	t.imgSig, t.imgSet = sig, images.NewSet(imgs)
	return t.imgSet, nil
}

func sameRegions(a, b []images.Region) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lockedReader reads target memory from any goroutine.
type lockedReader struct{ t *Target }

func (r *lockedReader) ReadMemory(addr uint64, dst []byte) error { return r.t.ReadMemory(addr, dst) }

// detachSignal is the signal to hand back when detaching (or resuming) a
// held thread: the one its signal-delivery-stop intercepted, none for a
// group-stop or an interrupt.
func (th *thread) detachSignal() int {
	if th.groupStop {
		return 0
	}
	return th.heldSig
}

// detachHeld detaches the threads held in a ptrace-stop, re-injecting their
// pending signals, and forgets every thread.
func (t *Target) detachHeld() error {
	var first error
	for tid, th := range t.threads {
		if !th.held {
			continue
		}
		if err := detach(tid, th.detachSignal()); err != nil && !errors.Is(err, unix.ESRCH) && first == nil {
			first = fmt.Errorf("detach thread %d: %w", tid, err)
		}
		th.held = false
	}
	t.stateMu.Lock()
	for tid, th := range t.threads {
		th.closeFiles()
		delete(t.threads, tid)
	}
	for tid := range t.departed {
		t.forgetDeparted(tid)
	}
	t.stateMu.Unlock()
	return first
}

// detachAll resumes and detaches every thread. Running threads are all
// interrupted first and then awaited together, so detaching costs the
// slowest thread's stop, not the sum of them. A thread that does not stop
// in time is left to the kernel, which detaches it when the tracer thread
// exits.
func (t *Target) detachAll() error {
	for tid, th := range t.threads {
		if !th.held {
			if err := interrupt(tid); err != nil {
				t.dropThread(tid, false)
			}
		}
	}
	deadline := time.Now().Add(stopTimeout)
	for _, th := range t.threads {
		if !th.held {
			t.awaitHeld(th, deadline) // not held in time: left to the kernel
		}
	}
	first := t.detachHeld()
	// Reap exit statuses of threads that died while traced (the process's
	// own, if it is our child, kept for ExitStatus).
	for tid := range t.gone {
		var ws unix.WaitStatus
		if got, err := unix.Wait4(tid, &ws, unix.WNOHANG|unix.WALL, nil); err == nil && got == t.pid && (ws.Exited() || ws.Signaled()) {
			t.statusMu.Lock()
			t.exitStatus, t.exitKnown = ws, true
			t.statusMu.Unlock()
		}
	}
	return first
}

// checkAccess verifies, for continuous mode, that the process may be traced:
// it seizes the main thread and detaches again at once. Threads are then
// attached only for the time of each capture.
func (t *Target) checkAccess() error {
	t.stateMu.Lock()
	err := t.refreshThreads()
	t.stateMu.Unlock()
	if err != nil {
		return err
	}
	// Check with a thread that is not in uninterruptible sleep (it would
	// stop only when the sleep ends): the main thread unless it is in one.
	tid := t.pid
	var buf [512]byte
	if th, ok := t.threads[tid]; ok {
		if st, _ := th.files.state(buf[:]); st == 'D' {
			for other, oth := range t.threads {
				if st, err := oth.files.state(buf[:]); err == nil && st != 'D' {
					tid = other
					break
				}
			}
		}
	}
	if err := seize(tid, 0); err != nil {
		return attachError(t.pid, err)
	}
	if err := interrupt(tid); err == nil {
		th := &thread{tid: tid}
		if err := t.awaitStopBlocking(th); err == nil {
			detach(tid, th.detachSignal())
		} else if errors.Is(err, target.ErrStopTimeout) {
			// It entered an uninterruptible sleep since: the loop lets
			// it go once it stops.
			t.checkStuck = th
		}
	}
	return nil
}

// letGoCheckStuck lets go of the thread checkAccess attached if it has
// stopped since, and reports whether it is still attached. Loop only.
func (t *Target) letGoCheckStuck() bool {
	th := t.checkStuck
	if th == nil {
		return false
	}
	held, err := t.awaitStop(th, unix.WALL|unix.WNOHANG, time.Time{})
	switch {
	case held:
		detach(th.tid, th.detachSignal())
	case err == nil:
		return true
	}
	t.checkStuck = nil
	return false
}

// refreshThreads re-reads /proc/PID/task into the thread table (continuous
// mode). The caller holds stateMu. It does not allocate while the set of
// threads stays the same.
func (t *Target) refreshThreads() error {
	if t.taskDir < 0 {
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/task", t.pid), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.exited = true
			return target.ErrExited
		}
		t.taskDir = fd
	}
	if err := seekStartRaw(t.taskDir); err != nil {
		return fmt.Errorf("list threads of PID %d: %w", t.pid, err)
	}
	t.listGen++
	live := 0
	for {
		n, err := getdentsRaw(t.taskDir, t.dirBuf[:])
		if err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
				t.exited = true
				return target.ErrExited
			}
			return fmt.Errorf("list threads of PID %d: %w", t.pid, err)
		}
		if n <= 0 {
			break
		}
		for b := t.dirBuf[:n]; ; {
			var name []byte
			if name, b = nextDirent(b); name == nil {
				break
			}
			tid, ok := parseUint(name)
			if ok && tid > 0 && tid < 1<<31 {
				th, have := t.threads[int(tid)]
				if !have {
					// An id reused already: the exited
					// thread's samples go.
					t.forgetDeparted(int(tid))
					th = &thread{tid: int(tid), files: openThreadFiles(t.pid, int(tid))}
					t.threads[int(tid)] = th
				}
				th.gen = t.listGen
				live++
			}
		}
	}
	for tid, th := range t.threads {
		if th.gen != t.listGen {
			delete(t.threads, tid)
			if th.ring != nil && th.ring.unread() {
				th.files.close()
				th.gen = t.listGen
				t.departed[tid] = th
				continue
			}
			th.closeFiles()
		}
	}
	for tid, th := range t.departed {
		if t.listGen-th.gen > 2 {
			t.forgetDeparted(tid)
		}
	}
	if live == 0 {
		t.exited = true
		return target.ErrExited
	}
	// A process whose only thread left is a zombie leader has exited (it
	// waits for its parent to reap it). Reading its state costs more than
	// the listing, and until it is read the zombie is only found idle: look
	// on the first listing at least zombieCheckEvery after the last look
	// (every tenth at 99 Hz, every one when ticks drain kernel samples).
	if now := time.Now(); live == 1 && now.Sub(t.zombieAt) >= zombieCheckEvery {
		t.zombieAt = now
		if th := t.threads[t.pid]; th != nil {
			if st, err := th.files.state(t.infoBuf[:]); err != nil || st == 'Z' || st == 'X' {
				t.exited = true
				return target.ErrExited
			}
		}
	}
	return nil
}

// forgetDeparted closes the ring of a departed thread, if tid is one, and
// forgets it. The caller holds stateMu.
func (t *Target) forgetDeparted(tid int) {
	if th, ok := t.departed[tid]; ok {
		th.closeFiles()
		delete(t.departed, tid)
	}
}

// zombieCheckEvery is how often a single-threaded target's state is read
// to find a zombie leader.
const zombieCheckEvery = 100 * time.Millisecond

// captureContinuous captures one thread in continuous mode: from its newest
// kernel sample when KernelSamplePeriod asks for them and its ring could be
// opened, by stopping it otherwise.
func (t *Target) captureContinuous(tid int, c *target.Capture) error {
	th, err := t.liveThread(tid)
	if err != nil {
		return err
	}
	if t.perfWalker == nil || th.noRing {
		return t.stopAndCapture(th, c)
	}
	if th.ring == nil {
		// A thread whose ring was closed while it idled gets back the
		// stack copy it had grown to, if the budget allows.
		stack := max(th.ringStack, perfStackBytes)
		r, small, err := t.openRing(tid, t.opts.KernelSamplePeriod, stack)
		if err != nil && stack > perfStackBytes {
			stack = perfStackBytes
			r, small, err = t.openRing(tid, t.opts.KernelSamplePeriod, stack)
		}
		if small && t.perfSmall == nil {
			t.perfSmall = fmt.Errorf("thread %d: sample buffer reduced to %d KiB for want of locked memory (ulimit -l, or perf_event_mlock_kb): CPU time whose samples did not fit is counted on the thread's previous stack", tid, perfMinRingBytes>>10)
		}
		if err != nil {
			// Not allowed or out of resources (a user's locked-memory
			// budget for rings is small): this thread is stopped for
			// its samples instead.
			th.noRing = true
			if t.perfOpenErr == nil {
				t.perfOpenErr = err
			}
			return t.stopAndCapture(th, c)
		}
		th.ring, th.ringStack, th.lastSample = r, stack, time.Now()
		// The ring has no sample yet: this once, stop the thread.
		return t.stopAndCapture(th, c)
	}
	return t.captureSampled(th, c)
}

// captureSampled fills c from the newest kernel sample of th and walks its
// stack copy. The walk stops at the copy's end (marked truncated): the
// thread has run on since the sample, so the rest of its stack is no longer
// the sample's.
func (t *Target) captureSampled(th *thread, c *target.Capture) error {
	r := th.ring
	at, size, ok := r.newest()
	if !ok {
		// Common in steady state (the kernel's period and the tick are
		// out of phase): the bare sentinel, which allocates nothing.
		r.consume()
		return ErrNoSample
	}
	defer r.consume()
	switch err := t.fillFromSample(th, at, size, c); {
	case errors.Is(err, errNoUserRegs):
		return ErrNoSample
	case err != nil:
		return fmt.Errorf("thread %d: %w", th.tid, err)
	}
	return nil
}

// errNoUserRegs reports a kernel sample without user registers (taken in a
// kernel thread): nothing to walk.
var errNoUserRegs = errors.New("sample without user registers")

// fillFromSample fills c from the sample record of size bytes at ring
// position at and walks its stack copy.
func (t *Target) fillFromSample(th *thread, at, size uint64, c *target.Capture) error {
	r := th.ring
	head := t.perfHead[:min(int(size), perfSampleHeadLen(perfRegCount))]
	r.readAt(head, at)
	s := &t.perfSample
	err := parsePerfSampleHead(head, int(size), perfRegCount, t.perfRegBuf[:], func(off int) uint64 {
		r.readAt(t.perfDyn[:], at+uint64(off))
		return binary.LittleEndian.Uint64(t.perfDyn[:])
	}, s)
	if err != nil {
		return err
	}
	if len(s.regs) != perfRegCount {
		return errNoUserRegs
	}
	regs := perfRegs(s.regs)
	c.Thread, c.Regs, c.Stopped, c.Err = target.ThreadID(th.tid), regs, 0, nil
	c.Stack = c.Stack[:min(s.stackLen, cap(c.Stack))]
	r.readAt(c.Stack, at+uint64(s.stackOff))
	c.StackBase = regs.SP
	lo, hi, ok := t.stackBounds(regs.SP)
	if !ok {
		lo, hi = regs.SP, regs.SP+uint64(len(c.Stack))
	}
	st := unwind.Stack{Base: c.StackBase, Data: c.Stack, Lo: lo, Hi: hi}
	c.PCs, c.Walk = t.perfWalker.Walk(regs, &st, c.PCs[:0])
	return nil
}

// KernelSampleError returns why kernel samples could not be used for some
// thread (which was then stopped for its samples), or nil.
func (t *Target) KernelSampleError() error {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	return t.perfOpenErr
}

// KernelSampleWarning returns why some thread's kernel samples are kept in
// a smaller buffer than the drain interval needs (samples that did not
// fit were counted on its previous stack), or nil.
func (t *Target) KernelSampleWarning() error {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	return t.perfSmall
}

// KernelSampled reports whether kernel samples are on, and whether every
// thread's could be opened so far (target.SampleDrainer).
func (t *Target) KernelSampled() (on, everyThread bool) {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	return t.perfWalker != nil, t.perfOpenErr == nil
}

// DrainSamples captures the kernel samples of a thread taken since the
// previous call into caps, oldest first, and returns how many
// (target.SampleDrainer). It reads the thread's ring without a system
// call and without stopping the thread, and allocates nothing. A thread
// without a ring yet, or refused one, gets target.ErrNotKernelSampled; a
// thread that exited with samples left is drained once more, then closed.
// Like Threads, which closes the rings of threads that are gone, it is
// called from the sampler's goroutine only.
func (t *Target) DrainSamples(id target.ThreadID, caps []*target.Capture) (int, error) {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	tid := int(id)
	t.stateMu.Lock()
	closed := t.closed
	th, live := t.threads[tid]
	departed := false
	if !live {
		th, departed = t.departed[tid]
	}
	t.stateMu.Unlock()
	switch {
	case closed:
		return 0, target.ErrClosed
	case !live && !departed:
		return 0, fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
	case t.perfWalker == nil || th.ring == nil:
		return 0, target.ErrNotKernelSampled
	}
	r := th.ring
	r.begin()
	n := 0
	for n < len(caps) {
		at, size, ok := r.next()
		if !ok {
			break
		}
		// A sample that cannot be read or walked is skipped: the
		// sampler counts its CPU time on the thread's last stack.
		if t.fillFromSample(th, at, size, caps[n]) == nil {
			th.ranOff = th.ranOff || caps[n].Walk.Stop == unwind.StopReadFailed
			n++
		}
	}
	r.consume()
	now := time.Now()
	if n > 0 {
		th.lastSample = now
	}
	switch {
	case n == len(caps):
		// More to drain.
	case departed:
		t.stateMu.Lock()
		t.forgetDeparted(tid)
		t.stateMu.Unlock()
	case th.ranOff && !th.ringFull && t.ringsMayGrow && t.perfSmall == nil && t.perfOpenErr == nil:
		t.growRing(th)
	case now.Sub(th.lastSample) > t.ringIdle:
		// Idle for long: its ring's locked memory goes back. If it
		// runs again, its next capture stops it once and opens a new
		// one.
		th.ring.close()
		th.ring = nil
	}
	return n, nil
}

// ringIdleTimeout is how long a thread's ring stays open without a sample.
const ringIdleTimeout = 5 * time.Second

// canLockMemory reports whether macprof has CAP_IPC_LOCK, which frees the
// rings it maps from the locked-memory budget (perf_event_mlock_kb and
// RLIMIT_MEMLOCK).
func canLockMemory() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_IPC_LOCK/32].Effective&(1<<(unix.CAP_IPC_LOCK%32)) != 0
}

// growRing reopens the kernel sample event of th, whose samples' walks ran
// past their stack copies, with twice the copy (and a ring to match), once
// its ring is drained. The new event starts its first period afresh: the
// sampler counts the CPU time of that part period on the last stack. If
// the kernel refuses the larger ring, the thread keeps the one it has.
func (t *Target) growRing(th *thread) {
	size := min(2*th.ringStack, perfMaxStackBytes)
	r, small, err := t.openRing(th.tid, t.opts.KernelSamplePeriod, size)
	if err != nil || small {
		if r != nil {
			r.close()
		}
		th.ringFull = true
		return
	}
	th.ring.close()
	th.ring, th.ringStack, th.ranOff = r, size, false
	th.ringFull = size >= perfMaxStackBytes
}

// captureTransient attaches to one thread, captures it and detaches
// (continuous mode), so that no signal of the target is intercepted
// between samples.
func (t *Target) captureTransient(tid int, c *target.Capture) error {
	th, err := t.liveThread(tid)
	if err != nil {
		return err
	}
	return t.stopAndCapture(th, c)
}

// liveThread looks a thread up in the thread table from a capturing
// goroutine (continuous mode), under stateMu.
func (t *Target) liveThread(tid int) (*thread, error) {
	t.stateMu.Lock()
	th, ok := t.threads[tid]
	t.stateMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
	}
	return th, nil
}

// stopAndCapture is captureTransient for a thread already looked up.
func (t *Target) stopAndCapture(th *thread, c *target.Capture) error {
	tid := th.tid
	if _, ok := t.stuck[tid]; ok {
		// Still attached from a capture it did not stop for.
		return fmt.Errorf("thread %d: %w", tid, target.ErrStopTimeout)
	}
	// A thread in uninterruptible sleep would stop only when its wait ends:
	// skip it rather than wait.
	st, cpu, serr := th.files.stateCPU(t.capBuf[:])
	if serr == nil && st == 'D' && !t.skipBlockedCheck {
		return fmt.Errorf("thread %d: %w", tid, target.ErrThreadBlocked)
	}
	// A thread running on another CPU stops within microseconds of the
	// interrupt: wait for it without sleeping. One that shares this CPU
	// can only reach its stop once this thread sleeps.
	spin := serr == nil && st == 'R' && cpu >= 0 && cpu != getcpuRaw()

	start := time.Now()
	if err := seize(tid, 0); err != nil {
		switch {
		case errors.Is(err, unix.ESRCH):
			return fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
		case errors.Is(err, unix.EPERM) && t.dying(th):
			// The kernel refuses to attach to a thread that is exiting.
			return fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
		default:
			return fmt.Errorf("attach thread %d: %w", tid, err)
		}
	}
	if err := interrupt(tid); err != nil {
		// The thread is exiting. A traced thread that exits stays a
		// zombie until its tracer reaps it, and holds up the whole
		// process's exit meanwhile: wait for it (or for a stop, then
		// detach) before giving up on it.
		switch err := t.awaitStopBlocking(th); {
		case err == nil:
			detach(tid, th.detachSignal())
			th.held, th.heldSig, th.groupStop = false, 0, false
		case errors.Is(err, target.ErrStopTimeout):
			t.holdStuck(th)
		}
		return fmt.Errorf("thread %d: %w", tid, target.ErrNoThread)
	}
	stopped := false
	if spin {
		var err error
		if stopped, err = t.spinForStop(th); err != nil {
			return err
		}
	}
	if !stopped {
		if err := t.awaitStopBlocking(th); err != nil {
			if errors.Is(err, target.ErrStopTimeout) {
				t.holdStuck(th)
			}
			// Otherwise the thread exited and its status was consumed:
			// nothing is left attached.
			return err
		}
	}
	err := t.captureHeld(th, c)
	rerr := t.release(th)
	c.Stopped = time.Since(start)
	if rerr != nil {
		return rerr
	}
	return err
}

// release detaches a thread held for one capture (continuous mode). A
// thread killed while held (SIGKILL ends a ptrace-stop) can no longer be
// detached, and a traced thread that dies stays a zombie until its tracer
// reaps it, holding up its whole process's exit meanwhile: release reaps
// it instead (the wait ends as soon as it is dead) and reports ErrNoThread.
func (t *Target) release(th *thread) error {
	err := detach(th.tid, th.detachSignal())
	th.held, th.heldSig, th.groupStop = false, 0, false
	if !errors.Is(err, unix.ESRCH) {
		return nil
	}
	switch err := t.awaitStopBlocking(th); {
	case err == nil:
		// Stopped again rather than dead: let it go.
		detach(th.tid, th.detachSignal())
		th.held, th.heldSig, th.groupStop = false, 0, false
	case errors.Is(err, target.ErrStopTimeout):
		t.holdStuck(th)
	}
	return fmt.Errorf("thread %d: %w", th.tid, target.ErrNoThread)
}

// stopSpin bounds how long a capture polls for a thread on another CPU to
// stop before it sleeps in wait4. Measured on the project's 2-vCPU VM, a
// running thread stopped within it in 95-99% of captures when the machine
// was otherwise idle, and polling saved about 15% of the profiler's CPU per
// tick: a sleep and a wake-up of the capturing thread cost more than the
// polling.
const stopSpin = 50 * time.Microsecond

// spinForStop polls, without sleeping, for a thread attached for one
// capture to stop, for up to stopSpin. It reports whether the thread is
// held.
func (t *Target) spinForStop(th *thread) (bool, error) {
	deadline := time.Now().Add(stopSpin)
	for {
		held, err := t.awaitStop(th, unix.WALL|unix.WNOHANG, time.Time{})
		if held || err != nil || time.Now().After(deadline) {
			return held, err
		}
	}
}

// awaitStopBlocking waits in wait4 until a thread attached for one capture
// stops (continuous mode), for at most continuousStopTimeout, and returns
// ErrStopTimeout after that (see stopTimer). The caller is locked to its OS
// thread. Where the timer cannot be set up, the wait is not bounded.
func (t *Target) awaitStopBlocking(th *thread) error {
	deadline := time.Now().Add(continuousStopTimeout)
	if t.stopTimer.arm(continuousStopTimeout) != nil {
		_, err := t.awaitStop(th, unix.WALL, time.Time{})
		return err
	}
	_, err := t.awaitStop(th, unix.WALL, deadline)
	t.stopTimer.disarm()
	return err
}

// holdStuck keeps a thread that did not stop in time, to be let go once it
// has (tendStuck).
func (t *Target) holdStuck(th *thread) {
	th.tracer = gettidRaw()
	t.stuck[th.tid] = th
}

// tendStuck lets go of the stuck threads that have stopped since, and
// forgets those that have died (reaping them). Only the OS thread that
// attached a thread can detach it; the others are left for a later call
// on that thread. The caller holds hotMu and is locked to its OS thread.
func (t *Target) tendStuck() {
	if len(t.stuck) == 0 {
		return
	}
	me := gettidRaw()
	for _, th := range t.stuck {
		if th.tracer != me {
			continue
		}
		held, err := t.awaitStop(th, unix.WALL|unix.WNOHANG, time.Time{})
		t.settleStuck(th, held, err)
	}
}

// settleStuck acts on the end of a wait for a stuck thread: one that
// stopped is let go, one that died (and was reaped) forgotten; one still
// asleep (no error, or the wait timed out) stays.
func (t *Target) settleStuck(th *thread, held bool, err error) {
	switch {
	case held:
		delete(t.stuck, th.tid)
		t.release(th)
	case err != nil && !errors.Is(err, target.ErrStopTimeout):
		delete(t.stuck, th.tid)
	}
}

// letGoStuck, at Close, waits up to stopTimeout in all for the stuck
// threads this OS thread attached to stop, and lets them go. A thread still
// asleep after that (or attached from another OS thread) stays attached,
// interrupted, until the OS thread that attached it ends, when the kernel
// detaches it: for `record`, when macprof exits. The caller holds hotMu.
func (t *Target) letGoStuck() {
	defer t.stopTimer.close()
	if len(t.stuck) == 0 {
		return
	}
	runtime.LockOSThread()
	defer t.unlockOSThread()
	deadline := time.Now().Add(stopTimeout)
	me := gettidRaw()
	for _, th := range t.stuck {
		left := time.Until(deadline)
		if th.tracer != me || left <= 0 || t.stopTimer.arm(left) != nil {
			continue
		}
		held, err := t.awaitStop(th, unix.WALL, deadline)
		t.stopTimer.disarm()
		t.settleStuck(th, held, err)
	}
}

// unlockOSThread undoes the LockOSThread of a continuous capture, unless a
// thread is left stuck: the goroutine then stays on this OS thread, the
// only one that can let the thread go, until none is.
func (t *Target) unlockOSThread() {
	switch {
	case len(t.stuck) > 0 && !t.pinned:
		t.pinned = true
	case len(t.stuck) == 0 && t.pinned:
		t.pinned = false
		runtime.UnlockOSThread()
		runtime.UnlockOSThread()
	default:
		runtime.UnlockOSThread()
	}
}

// awaitStop waits in wait4 until a thread attached for one capture stops
// (continuous mode), and reports whether it is held; with WNOHANG in
// options it returns false at once when the thread has not stopped yet.
// The kernel wakes this thread the moment the tracee stops, with no signal
// delivery or goroutine hand-off in between. The wait ends when the tracee
// reaches a stop or dies: PTRACE_INTERRUPT ends interruptible sleeps at
// once, and threads seen in uninterruptible sleep are not attached (see
// captureTransient); one that enters it after that check would hold the
// wait until it leaves it, so a non-zero deadline ends the wait with
// ErrStopTimeout once a signal (the stop timer's) interrupts wait4 after
// it. It never touches the thread table, which other goroutines update in
// this mode.
func (t *Target) awaitStop(th *thread, options int, deadline time.Time) (bool, error) {
	for {
		var ws unix.WaitStatus
		got, err := wait4Raw(th.tid, &ws, options)
		if errors.Is(err, unix.EINTR) {
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return false, fmt.Errorf("thread %d: %w", th.tid, target.ErrStopTimeout)
			}
			continue
		}
		if err == nil && got == 0 && options&unix.WNOHANG != 0 {
			return false, nil
		}
		if err != nil || got == 0 {
			return false, fmt.Errorf("thread %d: %w", th.tid, target.ErrNoThread)
		}
		if !ws.Stopped() {
			if got == t.pid && (ws.Exited() || ws.Signaled()) {
				// Our own child (launch mode) reaped here: keep its
				// status for ExitStatus.
				t.statusMu.Lock()
				t.exitStatus, t.exitKnown = ws, true
				t.statusMu.Unlock()
			}
			return false, fmt.Errorf("thread %d: %w", th.tid, target.ErrNoThread)
		}
		th.held, th.heldSig, th.groupStop = true, 0, false
		sig, ev := ws.StopSignal(), ws.TrapCause()
		switch {
		case ev == unix.PTRACE_EVENT_STOP && sig != unix.SIGTRAP:
			th.groupStop = true
		case ev == 0:
			// Seized without options, a thread reports no exec or
			// clone traps: every stop without an event is a signal's
			// delivery, SIGTRAP included, and the signal is handed back.
			th.heldSig = int(sig)
		}
		return true, nil
	}
}
