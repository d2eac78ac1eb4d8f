package record

import (
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/macprof/macprof/target"
)

// interruption passes the first signal that ends a recording on to a
// launched command, once, and only once every target was closed, so that
// the signal reaches the command itself rather than a tracer letting go.
type interruption struct {
	mu       sync.Mutex
	sig      os.Signal       // the first signal; nil until one comes
	cmd      target.Launched // the launched command, until it was waited for
	released bool            // every target was closed
	passed   bool            // sig went to cmd, or needed not
	// fromTerminal reports whether a Ctrl-C reached the command from its
	// terminal already (Config.FromTerminal); nil: never.
	fromTerminal func(pid int, sig os.Signal) bool
}

// launched notes the launched command, which signals reach through the
// backend (never a process that reused its PID).
func (in *interruption) launched(cmd target.Launched) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.cmd = cmd
}

// interrupt takes a signal and reports whether it is the first.
func (in *interruption) interrupt(sig os.Signal, stderr io.Writer, quiet bool) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.sig != nil {
		return false
	}
	in.sig = sig
	if !quiet {
		fmt.Fprintf(stderr, "macprof record: %v: stopping; a second signal exits at once\n", sig)
	}
	in.pass()
	return true
}

// detached notes that every target was closed.
func (in *interruption) detached() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.released = true
	in.pass()
}

// pass sends the signal to the command when both are known and the
// targets are closed; a Ctrl-C the command got from the terminal itself is
// not sent again, as a second one makes many programs quit at once.
func (in *interruption) pass() {
	if in.sig == nil || in.cmd == nil || !in.released || in.passed {
		return
	}
	in.passed = true
	if in.fromTerminal == nil || !in.fromTerminal(in.cmd.PID(), in.sig) {
		in.cmd.Signal(in.sig)
	}
}

// reaped forgets the command once it was waited for.
func (in *interruption) reaped() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.cmd = nil
}

// kill kills the command unless it was waited for, and returns its PID, or
// 0 when there was none to kill.
func (in *interruption) kill() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cmd == nil || in.cmd.Signal(syscall.SIGKILL) != nil {
		return 0
	}
	return in.cmd.PID()
}

// abandonCloseWait bounds how long a second signal waits for the targets
// to be closed: a tracer that exits lets go of its threads anyway.
const abandonCloseWait = time.Second

// abandon ends a recording at a second signal: it closes every target, so
// that no thread stays held, kills a launched command, so that it is not
// left behind, and returns 128 plus the signal's number.
func (r *recording) abandon(sig os.Signal, stderr io.Writer) int {
	closed := make(chan struct{})
	go func() {
		r.closeAll()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(abandonCloseWait):
		fmt.Fprintln(stderr, "macprof record: the targets are not closed yet; exiting, which lets go of them")
	}
	if pid := r.intr.kill(); pid != 0 {
		fmt.Fprintf(stderr, "macprof record: %v again: killed the command (PID %d) and exiting\n", sig, pid)
	} else {
		fmt.Fprintf(stderr, "macprof record: %v again: exiting\n", sig)
	}
	n := 1
	if s, ok := sig.(syscall.Signal); ok {
		n = int(s)
	}
	return 128 + n
}

// lockedWriter serializes writes: Run's goroutine and the recording's both
// write to stderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// unlocked returns the writer w wraps, for the status line, which writes
// only to a terminal, itself safe for concurrent writes.
func unlocked(w io.Writer) io.Writer {
	if l, ok := w.(*lockedWriter); ok {
		return l.w
	}
	return w
}
