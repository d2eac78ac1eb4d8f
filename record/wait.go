package record

import (
	"fmt"
	"io"
	"time"
)

// waitNoteAfter is how long record waits for a launched command that has
// not exited before saying that it waits: one just exiting is reaped
// sooner, and nothing need be said.
const waitNoteAfter = 200 * time.Millisecond

// waitCommand waits for a launched command and returns its status. Unless
// quiet, or the command is known to have exited, one still running after
// waitNoteAfter is announced on stderr (a recording whose time is up would
// otherwise seem to hang until the command ends).
func (rec *recording) waitCommand(wait func() int, exited, written, quiet bool, stderr io.Writer, pid int) int {
	if quiet || exited {
		return wait()
	}
	done := make(chan int, 1)
	go func() { done <- wait() }()
	t := time.NewTimer(waitNoteAfter)
	defer t.Stop()
	select {
	case st := <-done:
		return st
	case <-t.C:
	}
	what := "the recording is over"
	if written {
		what = "the profile is written"
	}
	stop := "Ctrl-C interrupts it, a second Ctrl-C kills it"
	if rec.intr.signalled() {
		stop = "Ctrl-C kills it"
	}
	fmt.Fprintf(stderr, "macprof: %s; waiting for the command (PID %d) to exit (%s)\n", what, pid, stop)
	return <-done
}

// signalled reports whether a signal has ended the recording already.
func (in *interruption) signalled() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.sig != nil
}
