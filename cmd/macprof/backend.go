package main

import (
	"os"
	"os/signal"

	"github.com/macprof/macprof/target"
)

// backend is how the commands reach the OS: one per OS (target_*.go), and
// in tests the darwin backend over a model of xnu, so that a test runs the
// very flags-to-profile path a user's command takes.
type backend struct {
	// attach opens a running process.
	attach func(pid int, opts target.Options) (target.Target, error)
	// launch starts a command and attaches to it.
	launch func(args []string, opts target.Options) (target.Launched, error)
	// descendants lists a launched command's descendants (record.Config);
	// nil follows none.
	descendants func() func(root int, dst []int) []int
	// settled tells that no process or thread was created since it last
	// asked (record.Config.Settled); nil when the OS cannot tell.
	settled func() func() bool
	// watchExit calls f when pid exits (record.Config.WatchExit); nil
	// when the OS cannot.
	watchExit func(pid int, f func()) (stop func(), err error)
	// fromTerminal tells whether a signal reached a launched command
	// from its terminal already (record.Config.FromTerminal).
	fromTerminal func(pid int, sig os.Signal) bool
}

// osBackend is the backend of the OS macprof runs on.
var osBackend = newOSBackend()

// notifyStop makes c receive the signals that end a sampling command;
// tests replace it to send their own.
var notifyStop = func(c chan<- os.Signal) { signal.Notify(c, stopSignals...) }
