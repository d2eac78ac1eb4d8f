//go:build linux

package sampler

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tickFD is the tick timer on Linux: a timerfd that Run's own goroutine
// waits on in the runtime's network poller. With a Go timer the runtime's
// sysmon, asleep while every P idles, sleeps only until the next timer: it
// would wake at each tick and poll once more before it sleeps again. With
// the timer's channel read by another goroutine, each tick would also hand
// Run's goroutine over, and the runtime wakes a second thread to look for
// work at each hand-off. A poller wake-up takes Run's goroutine to a P and
// wakes nothing else. Wake, DrainSoon and the end of Run's context fire the
// timer (kick) after their own signal, so one wait serves them all.
type tickFD struct {
	f    *os.File
	rc   syscall.RawConn
	fd   int
	poll func(uintptr) bool // t.step, made once: a wait allocates nothing

	// The wait in progress, for step.
	ctx       context.Context
	d         time.Duration
	wake, now chan struct{}
	armed     bool
	ev        waitEvent

	mu     sync.Mutex // orders kick against close
	closed bool
}

// newTickFD creates the timer, disarmed.
func newTickFD() (*tickFD, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	t := &tickFD{fd: fd, f: os.NewFile(uintptr(fd), "tick timerfd")}
	if t.rc, err = t.f.SyscallConn(); err != nil {
		t.f.Close()
		return nil, err
	}
	t.poll = t.step
	return t, nil
}

// settime arms the timer to fire once in d, or disarms it with d 0. The
// call is raw: a regular system call would wake sysmon.
func (t *tickFD) settime(d time.Duration) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(t.fd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
}

// step is the poller's callback of a wait: the first call arms the timer
// and looks at the signals, each later one reads the timer's expiries (raw
// reads). It reports whether the wait is over. The arming is made here,
// after the poller has forgotten what was ready before, so that an expiry
// at once is not lost; the signals are looked at after it, so that a kick
// after the look comes after the arming, which would otherwise replace it.
func (t *tickFD) step(uintptr) bool {
	if !t.armed {
		t.armed = true
		t.settime(t.d)
		if t.ctx.Err() != nil {
			t.ev = waitDone
			return true
		}
		select {
		case <-t.wake:
			t.ev = waitWake
			return true
		case <-t.now:
			t.ev = waitDrainNow
			return true
		default:
			return false
		}
	}
	var buf [8]byte
	_, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(t.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return e == 0
}

// kick fires the timer at once, waking a wait; it may be called from any
// goroutine, also after close.
func (t *tickFD) kick() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.settime(time.Nanosecond)
	}
}

// close releases the timer.
func (t *tickFD) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.f.Close()
}

// await waits until next, until ctx is done, or until wake or now has a
// signal (each followed by a kick), and says which came first.
func (t *tickFD) await(ctx context.Context, next time.Time, wake, now chan struct{}) waitEvent {
	t.ctx, t.wake, t.now = ctx, wake, now
	defer func() { t.ctx, t.wake, t.now = nil, nil, nil }()
	for {
		t.d = time.Until(next)
		if t.d <= 0 {
			return waitTick // (a one-shot timer that fired is disarmed)
		}
		t.armed, t.ev = false, waitTick
		if err := t.rc.Read(t.poll); err != nil {
			return waitDone // closed: cannot happen while Run waits
		}
		if t.ev != waitTick {
			t.settime(0) // no expiry to wake the poller for nothing
			return t.ev
		}
		// The timer fired, or a kick whose signal was taken already
		// replaced its arming: the loop tells which.
	}
}
