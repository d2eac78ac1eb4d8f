//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A continuous capture waits in wait4 for the thread it interrupted to
// stop. The wait normally ends within microseconds, but a thread that
// enters an uninterruptible sleep after the capture checked its state (a
// vfork parent waiting for its child, a read from a hung disk) stops only
// when the sleep ends, which may be never. wait4 has no timeout, so the
// wait is bounded by a POSIX timer that signals the waiting thread itself
// (SIGEV_THREAD_ID) with stopTimerSignal, whose action lacks SA_RESTART:
// the signal ends the wait4 with EINTR. The signal is one no other code
// sends; the Go runtime's handler, already installed for it, ignores it
// (it is not subscribed to with os/signal). Arming and disarming the timer
// costs two system calls per blocking wait and no wake-up.
const stopTimerSignal = unix.Signal(61) // SIGRTMIN+29 in the kernel's numbering

// saRestart is SA_RESTART on amd64 and arm64.
const saRestart = 0x10000000

// sigevThreadID is SIGEV_THREAD_ID: deliver to the thread in sigev_tid.
const sigevThreadID = 4

// sigevent is the kernel's struct sigevent on 64-bit Linux: 64 bytes,
// signo at 8, notify at 12, the target thread id at 16.
type sigevent struct {
	value  uint64
	signo  int32
	notify int32
	tid    int32
	_      [11]int32
}

// errStopTimerUnavailable reports that stopTimerSignal has no handler that
// could end a wait (the Go runtime did not install one), so waits are not
// bounded.
var errStopTimerUnavailable = errors.New("no handler for the stop timer's signal")

var (
	stopTimerSetup sync.Once
	stopTimerErr   error
)

// prepareStopTimerSignal clears SA_RESTART in stopTimerSignal's action, once
// per process. It refuses when the action is the default (which would end
// the process) or SIG_IGN (which would not interrupt the wait).
func prepareStopTimerSignal() error {
	stopTimerSetup.Do(func() {
		var act sigactionKernel
		if err := rtSigaction(stopTimerSignal, nil, &act); err != nil {
			stopTimerErr = fmt.Errorf("read the action of signal %d: %w", stopTimerSignal, err)
			return
		}
		if act.handler == 0 || act.handler == 1 {
			stopTimerErr = errStopTimerUnavailable
			return
		}
		act.flags &^= saRestart
		if err := rtSigaction(stopTimerSignal, &act, nil); err != nil {
			stopTimerErr = fmt.Errorf("set the action of signal %d: %w", stopTimerSignal, err)
		}
	})
	return stopTimerErr
}

// stopTimer is a POSIX timer that signals one OS thread. It is created on
// the thread that waits, and again when the waiting goroutine has moved to
// another thread.
type stopTimer struct {
	id  int32
	tid int // the thread it signals; 0 when there is no timer
}

// arm starts the timer to signal the calling OS thread after d. The caller
// must be locked to its OS thread until it disarms the timer.
func (st *stopTimer) arm(d time.Duration) error {
	if err := prepareStopTimerSignal(); err != nil {
		return err
	}
	tid := gettidRaw()
	if st.tid != tid {
		st.close()
		ev := sigevent{signo: int32(stopTimerSignal), notify: sigevThreadID, tid: int32(tid)}
		id, err := timerCreateRaw(&ev)
		if err != nil {
			return fmt.Errorf("timer_create: %w", err)
		}
		st.id, st.tid = id, tid
	}
	return st.set(d)
}

// disarm stops the timer.
func (st *stopTimer) disarm() {
	if st.tid != 0 {
		st.set(0)
	}
}

// stopTimerRepeat is how often the timer signals again after it first
// fired. The first signal can come before the thread has entered wait4 (on
// a loaded machine it may not run for longer than the bound), and would
// then interrupt nothing; the next one ends the wait.
const stopTimerRepeat = 5 * time.Millisecond

func (st *stopTimer) set(d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if d > 0 {
		spec.Interval = unix.NsecToTimespec(int64(stopTimerRepeat))
	}
	if err := timerSettimeRaw(st.id, &spec); err != nil {
		return fmt.Errorf("timer_settime: %w", err)
	}
	return nil
}

// close deletes the timer.
func (st *stopTimer) close() {
	if st.tid != 0 {
		timerDeleteRaw(st.id)
		st.id, st.tid = 0, 0
	}
}
