//go:build linux && (amd64 || arm64)

package ptrace

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Every ptrace-stop of a tracee sends SIGCHLD to the tracer's process
// unless the process's SIGCHLD action has SA_NOCLDSTOP; the tracer's wait4
// is woken either way (kernel/signal.c, do_notify_parent_cldstop).
// Persistent targets learn of unsolicited stops from that signal.
// Continuous targets wait for each stop of their own in wait4 and leave
// nothing attached between captures, so for them the signal is pure cost:
// a delivery, a run of the runtime's handler and a sigreturn per capture,
// on a thread it may have to wake. While continuous targets are open and no
// persistent one is, the SIGCHLD action carries SA_NOCLDSTOP. Only that flag
// is changed: the handler stays the Go runtime's, which does not install it
// again, and exits of children are still signalled.
var stopSignals stopSignalState

// stopSignalState counts the open targets of each mode.
type stopSignalState struct {
	mu         sync.Mutex
	continuous int  // open continuous targets
	persistent int  // open persistent targets
	quiet      bool // SA_NOCLDSTOP was set here
}

// sigactionKernel is the kernel's struct sigaction on amd64 and arm64
// (both define SA_RESTORER, so both have the restorer field).
type sigactionKernel struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// saNoCldStop is SA_NOCLDSTOP, 1 on every Linux architecture.
const saNoCldStop = 1

// holdStopSignals registers an open target and returns the function that
// unregisters it.
func holdStopSignals(continuous bool) (release func()) {
	s := &stopSignals
	s.mu.Lock()
	if continuous {
		s.continuous++
	} else {
		s.persistent++
	}
	s.update()
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if continuous {
				s.continuous--
			} else {
				s.persistent--
			}
			s.update()
			s.mu.Unlock()
		})
	}
}

// update sets or clears SA_NOCLDSTOP to match the open targets. The caller
// holds mu.
func (s *stopSignalState) update() {
	want := s.continuous > 0 && s.persistent == 0
	if want == s.quiet {
		return
	}
	if setNoCldStop(want) == nil {
		s.quiet = want
	}
}

// setNoCldStop sets or clears SA_NOCLDSTOP in the SIGCHLD action, keeping
// the rest of it.
func setNoCldStop(on bool) error {
	var act sigactionKernel
	if err := rtSigaction(unix.SIGCHLD, nil, &act); err != nil {
		return err
	}
	if on {
		act.flags |= saNoCldStop
	} else {
		act.flags &^= saNoCldStop
	}
	return rtSigaction(unix.SIGCHLD, &act, nil)
}

// noCldStop reports whether the SIGCHLD action has SA_NOCLDSTOP.
func noCldStop() (bool, error) {
	var act sigactionKernel
	if err := rtSigaction(unix.SIGCHLD, nil, &act); err != nil {
		return false, err
	}
	return act.flags&saNoCldStop != 0, nil
}
