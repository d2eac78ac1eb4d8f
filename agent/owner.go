package agent

import (
	"fmt"
	"sync"

	"github.com/macprof/macprof/profile"
)

// owners keeps the user each profiled process runs as, by PID, so that
// every window labels its processes with their user: a profile says whose
// process it came from.
type owners struct {
	mu  sync.Mutex
	uid map[int]int
	// gone are PIDs whose target exited: their user is dropped once the
	// window that holds their last samples is labelled.
	gone map[int]bool
}

func (o *owners) set(pid, uid int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.uid == nil {
		o.uid, o.gone = map[int]int{}, map[int]bool{}
	}
	o.uid[pid] = uid
	delete(o.gone, pid)
}

func (o *owners) exited(pid int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.uid[pid]; ok {
		o.gone[pid] = true
	}
}

// label sets the user of each process of w that has a known one, then
// forgets the users of processes that exited.
func (o *owners) label(w *profile.Window) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := range w.Processes {
		if uid, ok := o.uid[w.Processes[i].PID]; ok {
			w.Processes[i].UID, w.Processes[i].HasUID = uid, true
		}
	}
	for pid := range o.gone {
		delete(o.uid, pid)
	}
	clear(o.gone)
}

// processOwner returns the user pid runs as, through Config.ProcessOwner
// or the OS.
func (a *agent) processOwner(pid int) (uid int, ok bool) {
	if a.cfg.ProcessOwner != nil {
		return a.cfg.ProcessOwner(pid)
	}
	return processOwner(pid)
}

// ownerError refuses a process just attached whose user (uid, known) is
// not want alone: between the listing and the attach it may have exec'd a
// setuid program, or ended and had its PID reused.
func ownerError(uid int, known bool, want int) error {
	switch {
	case !known:
		return fmt.Errorf("its user ids are no longer all uid %d (a setuid program, or gone)", want)
	case uid != want:
		return fmt.Errorf("it now runs as uid %d, not uid %d", uid, want)
	}
	return nil
}
