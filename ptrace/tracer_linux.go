//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/macprof/macprof/target"
	"golang.org/x/sys/unix"
)

// The tracer thread is one goroutine locked to its OS thread: every ptrace
// request for a tracee must come from the thread that attached it. A
// persistent target does all of its work there; a continuous one only
// checks access there (and lets go of the thread it checked with), since
// its captures attach threads from the capturing goroutine itself.

// tracerNice is the nice value the tracer thread asks for.
const tracerNice = -10

type opcode uint8

const (
	opCapture opcode = iota + 1
	opCaptureAll
	opCaptureBatch
	opClose
)

// request is one call to the tracer thread; the caller owns it again once
// reply has been signalled.
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

// call sends r to the tracer thread and waits for its reply; after Close
// it sets r.err to target.ErrClosed.
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

// loop owns the tracer thread.
func (t *Target) loop(ready chan<- error) {
	// The goroutine stays locked until it exits; the runtime then ends the
	// OS thread, and the kernel detaches whatever tracee is left.
	runtime.LockOSThread()
	defer close(t.done)
	t.tracerTID = gettidRaw()
	// While a target's threads are stopped they wait for this thread; let
	// it win the CPU against the target's own busy threads when the
	// system allows (root or CAP_SYS_NICE). The setting is per thread.
	setThreadNice(t.tracerTID, tracerNice)
	defer holdStopSignals(t.continuous())()
	attach := t.checkAccess
	if t.heldAtExec {
		attach = t.listThreads
	}
	var sigch <-chan os.Signal // stays nil, never ready, in continuous mode
	if p := t.persist; p != nil {
		// Persistent mode services unsolicited stops when SIGCHLD says
		// there are some. Continuous mode waits for each stop in wait4 and
		// leaves nothing attached between captures: it needs no
		// notification, and each one would wake a goroutine per capture.
		signal.Notify(p.sigch, syscall.SIGCHLD)
		defer signal.Stop(p.sigch)
		sigch = p.sigch
		attach = t.attachAll
		// A snapshot's first Images (the memory map, build IDs,
		// unwind resolver) is read beside the attach, on the CPU the
		// caller waits on, rather than after it, and the unwind
		// tables of its objects start to build then (startTables);
		// Images called meanwhile waits for it (imgMu).
		go func() {
			if set, err := t.Images(); err == nil && t.plan().tables {
				startTables(set)
			}
		}()
	}
	if err := attach(); err != nil {
		t.detachAll()
		ready <- err
		return
	}
	ready <- nil
	// pollTimer wakes the loop to look again at the thread checkAccess
	// left stuck (continuous mode).
	pollTimer := time.NewTimer(time.Hour)
	pollTimer.Stop()
	for {
		if t.letGoCheckStuck() {
			pollTimer.Reset(10 * time.Millisecond)
		}
		select {
		case r := <-t.reqs:
			t.handle(r)
			closing := r.op == opClose
			r.reply <- struct{}{} // r belongs to the caller from here on
			if closing {
				return
			}
		case <-sigch:
			t.persist.drainWant = true
		case <-pollTimer.C:
		}
		if p := t.persist; p != nil && p.drainWant {
			t.drain()
		}
	}
}

// handle serves one request on the tracer thread. Only a persistent target
// is sent captures; both modes are sent opClose.
func (t *Target) handle(r *request) {
	if r.op == opClose {
		if t.tracerTID == os.Getpid() && !t.continuous() {
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
		if t.tasks != nil {
			t.tasks.close()
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

// detachHeld detaches the threads held in a ptrace-stop, re-injecting their
// pending signals, and forgets every thread.
func (t *Target) detachHeld() error {
	var first error
	for tid, th := range t.threads {
		if !th.held {
			continue
		}
		if err := th.letGo(); err != nil && !errors.Is(err, unix.ESRCH) && first == nil {
			first = fmt.Errorf("detach thread %d: %w", tid, err)
		}
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
// exits. After a failed Attach of a continuous target no thread is
// attached: every interrupt fails and each thread is only dropped.
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
	if t.continuous() {
		// Nothing was traced to die: a wait here would reap the process
		// itself when it is our child (launched, and ended at once), and
		// its status with it.
		return first
	}
	// Reap exit statuses of threads that died while traced (the process's
	// own, if it is our child, kept for ExitStatus).
	for tid := range t.gone {
		var ws unix.WaitStatus
		if got, err := wait4(tid, &ws, unix.WNOHANG|unix.WALL); err == nil {
			t.noteExit(got, ws)
		}
	}
	return first
}
