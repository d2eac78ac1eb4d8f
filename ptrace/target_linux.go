//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"golang.org/x/sys/unix"
)

// Target is a Linux process being profiled through ptrace. Its mode is
// fixed at Attach (see the package doc): persist is set for a persistent
// target; stop and tasks for a continuous one, and kernel too when it
// takes kernel samples.
type Target struct {
	pid    int
	opts   target.Options
	walker *unwind.Walker

	reqs    chan *request
	done    chan struct{} // closed when the loop has exited
	hotMu   sync.Mutex    // guards hot, the reusable request, and every capture
	hot     request
	closing sync.Once

	pubMem  sync.Mutex
	pubRead memReader // for ReadMemory from other goroutines

	statusMu   sync.Mutex
	exitStatus unix.WaitStatus
	exitKnown  bool

	// stateMu guards the thread table and the exited and closed flags, so
	// that Threads and Info, called from other goroutines, never wait for
	// the tracer thread. A persistent target's tracer thread is their only
	// writer and reads them without it; a continuous target's Threads
	// writes them under it.
	stateMu sync.Mutex
	threads map[int]*thread
	// departed holds threads that exited with kernel samples not yet
	// drained: listed by Threads for two more listings, so that the
	// sampler drains them, then closed.
	departed map[int]*thread
	gone     map[int]struct{} // tids dropped but perhaps not yet reaped (loop only)
	exited   bool
	closed   bool
	infoBuf  [256]byte
	pathBuf  [64]byte  // for /proc paths built under stateMu
	names    nameWatch // when threads' names are read again (threadnames_linux.go)

	// imgMu guards the image cache, which Images fills from any goroutine.
	imgMu    sync.Mutex
	imgSig   []images.Region
	imgSet   *images.Set
	imgVM    uint64 // processVMPages when imgSet was read (0: unknown)
	vmFile   vmPagesFile
	buildIDs map[string]string
	tables   targetTables // the unwind tables of imgSet's objects
	gens     execGens     // kernel-sampled targets: the images of each program the process ran

	// tracerTID is the tracer thread's id.
	tracerTID int

	// Used by whichever goroutine captures: the tracer thread of a
	// persistent target, the caller holding hotMu of a continuous one.
	regions images.Regions
	regs    regsBuf
	walkMem memReader

	persist *persistent    // persistent mode only
	stop    *stopCapture   // continuous mode only
	tasks   *taskList      // continuous mode only (under stateMu)
	kernel  *kernelSampler // continuous mode with Options.Kernel.Period only

	// heldAtExec: launched with process rings, held at its exec while
	// attached (see attach).
	heldAtExec bool
}

// Attach seizes every thread of process pid, including threads created
// while it attaches, and returns the Target. The process keeps running.
// With opts.Continuous it only checks that the process may be traced, and
// each capture attaches its thread for its own time.
func Attach(pid int, opts target.Options) (*Target, error) { return attach(pid, opts, false) }

// attach is Attach; heldAtExec says that pid is a command the caller
// launched and holds stopped at its exec (process rings), which may be
// traced, and is not to be stopped again to check it.
func attach(pid int, opts target.Options, heldAtExec bool) (*Target, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("invalid PID %d", pid)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		return nil, fmt.Errorf("no process with PID %d", pid)
	}
	t, err := newTarget(pid, opts)
	if err != nil {
		return nil, err
	}
	t.heldAtExec = heldAtExec
	ready := make(chan error, 1)
	go t.loop(ready)
	if err := <-ready; err != nil {
		<-t.done
		return nil, err
	}
	suspendable(t)
	return t, nil
}

// newTarget returns the Target for pid, neither attached nor started.
func newTarget(pid int, opts target.Options) (*Target, error) {
	opts = opts.WithDefaults()
	t := &Target{
		pid:      pid,
		opts:     opts,
		reqs:     make(chan *request),
		done:     make(chan struct{}),
		threads:  make(map[int]*thread),
		gone:     make(map[int]struct{}),
		buildIDs: make(map[string]string),
		departed: make(map[int]*thread),
	}
	t.tables.vdso = vdsoTableUse(walkPlanOf(opts.Unwind))
	t.pubRead.pid = pid
	t.walkMem.pid = pid
	w, err := newWalker(opts, &t.walkMem)
	if err != nil {
		return nil, err
	}
	t.walker = w
	if opts.Continuous {
		t.stop = newStopCapture()
		t.tasks = &taskList{dir: -1}
		if opts.Kernel.Period > 0 {
			if t.kernel, err = newKernelSampler(opts); err != nil {
				return nil, err
			}
			t.kernel.openRing = t.openAfterExecs(t.kernel.openRing)
		}
	} else {
		t.persist = newPersistent()
	}
	t.hot.reply = make(chan struct{}, 1)
	return t, nil
}

// exitedTarget returns a continuous Target for a process that exited
// before it could be attached: it lists no thread and reports ErrExited,
// so that a command that ends at once still gets an (empty) profile.
func exitedTarget(pid int, opts target.Options) (*Target, error) {
	opts.Continuous = true
	t, err := newTarget(pid, opts)
	if err != nil {
		return nil, err
	}
	t.exited = true
	close(t.done)
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
	path := strconv.AppendInt([]byte("/proc/"), int64(t.pid), 10)
	path = append(path, "/exe\x00"...)
	var buf [unix.PathMax]byte
	n, err := readlinkRaw(path, buf[:])
	if err != nil || n >= len(buf) {
		return ""
	}
	return string(buf[:n])
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
// does not wait for the tracer thread. With process rings, the listing
// that finds the process exited (ErrExited) still gives the threads that
// left samples to drain.
func (t *Target) Threads(dst []target.ThreadID) ([]target.ThreadID, error) {
	dst = dst[:0]
	if t.continuous() {
		t.tendStuckAnywhere()
	}
	t.stateMu.Lock()
	defer t.stateMu.Unlock()
	p, kids := t.processRings(), t.descendantRings()
	if p != nil && !t.closed {
		// Before the listing, so that a thread gone by then is listed
		// as departed with the samples it left; and on an exited
		// target too, whose known threads are drained once more.
		p.collect()
	}
	if kids != nil && !t.closed {
		kids.collect()
	}
	switch {
	case t.closed:
		return dst, target.ErrClosed
	case t.exited:
		return dst, target.ErrExited
	}
	if t.continuous() {
		err := t.refreshThreads()
		if p != nil {
			if errors.Is(err, target.ErrExited) {
				// Its threads are listed with the exit,
				// departed, with what they left (all since
				// it started, if it kept its samples).
				t.departAll()
			}
			t.listSampledThreads(p)
		}
		if kids != nil {
			// Descendants' threads, departed, with their samples.
			t.listDescendantThreads(kids)
		}
		if err != nil {
			if p != nil || kids != nil {
				for tid := range t.departed {
					dst = append(dst, target.ThreadID(tid))
				}
				slices.Sort(dst)
			}
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
// only for its own capture), filling caps[i] for ids[i] and errs[i] with
// its error, in one call: a single request to the tracer thread of a
// persistent target, none for a continuous one, which captures on the
// caller's thread. It saves a round trip between goroutines per thread,
// which on a busy machine costs more than the capture itself.
func (t *Target) CaptureBatch(ids []target.ThreadID, caps []*target.Capture, errs []error) {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	if t.continuous() {
		t.captureBatchHere(ids, caps, errs)
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

// Capture stops one thread, captures and walks its stack, and resumes it;
// with kernel samples it takes the thread's newest sample instead.
func (t *Target) Capture(id target.ThreadID, c *target.Capture) error {
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	if t.continuous() {
		return t.captureHere(int(id), c)
	}
	r := &t.hot
	r.op, r.tid, r.capture, r.err = opCapture, int(id), c, nil
	t.call(r)
	r.capture = nil
	return r.err
}

// CaptureAll stops every thread, captures each, then resumes them all
// (target.Snapshotter). Only a persistent target can: a continuous one
// returns errNotPersistent.
func (t *Target) CaptureAll(dst []target.Capture) ([]target.Capture, error) {
	return t.captureAllOp(dst, false)
}

// captureAllOp is CaptureAll, with each thread detached from the stop of its
// capture when release is set (CaptureAllAndDetach).
func (t *Target) captureAllOp(dst []target.Capture, release bool) ([]target.Capture, error) {
	if t.continuous() {
		return dst[:0], errNotPersistent
	}
	t.hotMu.Lock()
	defer t.hotMu.Unlock()
	r := &t.hot
	r.op, r.captures, r.err = opCaptureAll, dst, nil
	t.persist.release = release
	t.call(r)
	t.persist.release = false
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
	p := t.processRings()
	if p != nil && t.imgSet != nil && !p.mappedSince() {
		// The kernel writes a record of each executable mapping
		// into process rings: none since the last read.
		return t.imgSet, nil
	}
	vm := t.vmFile.pages(t.pid)
	if vm != 0 && vm == t.imgVM && t.imgSet != nil && t.imgSig != nil {
		// No mapping added or removed (processVMPages).
		return t.imgSet, nil
	}
	set, err := t.images()
	t.imgVM = 0
	if err == nil {
		t.imgVM = vm
	}
	switch {
	case err != nil:
	case p != nil:
		// The first read, before the command ran, is its first
		// version (imageHistory).
		p.setBase(set, t.Executable)
	case t.kernel != nil:
		t.gens.noteImages(set, t.tables.res.Load(), t.Executable)
		if t.kernel.kids != nil {
			// What the command's children start with.
			t.kernel.kids.setBase(set, t.Executable)
		}
	}
	return set, err
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

// continuous reports whether the target is in continuous mode
// (Options.Continuous, fixed at Attach): each thread is attached only for
// its own capture.
func (t *Target) continuous() bool { return t.persist == nil }

// errNotPersistent is CaptureAll's error on a continuous target, whose
// threads are not attached between captures and cannot be stopped together.
var errNotPersistent = errors.New("CaptureAll needs a persistent target (attached without Options.Continuous)")

// Close resumes every thread and detaches. It is safe to call more than
// once and from any goroutine.
func (t *Target) Close() error {
	var err error
	t.closing.Do(func() {
		unsuspendable(t)
		if t.continuous() {
			// Captures run on their callers' goroutines in this mode:
			// none may use a thread's files or ring while they close.
			t.hotMu.Lock()
			defer t.hotMu.Unlock()
			t.letGoStuck()
			if t.kernel != nil && t.kernel.proc != nil {
				t.kernel.proc.close()
			}
			if t.kernel != nil && t.kernel.kids != nil {
				t.kernel.kids.close()
			}
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
	// (Outside hotMu, which Close holds above in continuous mode.)
	t.imgMu.Lock()
	t.vmFile.close()
	t.imgMu.Unlock()
	return err
}
