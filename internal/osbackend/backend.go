// Package osbackend is how macprof's commands reach the OS: one Backend per
// OS (ptrace and perf_event on Linux, task ports on darwin), chosen at build
// time, so that a command and its tests (which hand in the darwin backend
// over a model of xnu) run the same flags-to-profile path.
package osbackend

import (
	"os"

	"github.com/macprof/macprof/target"
)

// Backend is the functions a command uses to reach the OS.
type Backend struct {
	// Attach opens a running process.
	Attach func(pid int, opts target.Options) (target.Target, error)
	// Launch starts a command and attaches to it.
	Launch func(args []string, opts target.Options) (target.Launched, error)
	// Descendants lists a launched command's descendants (record.Config);
	// nil follows none.
	Descendants func() func(root int, dst []int) []int
	// Settled tells that no process or thread was created since it last
	// asked (record.Config.Settled); nil when the OS cannot tell.
	Settled func() func() bool
	// WatchExit calls f when pid exits (record.Config.WatchExit); nil
	// when the OS cannot.
	WatchExit func(pid int, f func()) (stop func(), err error)
	// FromTerminal tells whether a signal reached a launched command
	// from its terminal already (record.Config.FromTerminal).
	FromTerminal func(pid int, sig os.Signal) bool
}
