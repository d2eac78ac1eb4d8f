package main

import (
	"os"
	"os/signal"

	"github.com/macprof/macprof/internal/cli"
	"github.com/macprof/macprof/internal/osbackend"
)

// osBackend is the backend of the OS macprof runs on; the darwin model
// tests replace it with the darwin backend over a model of xnu.
var osBackend = osbackend.OS()

// notifyStop makes c receive the signals that end a sampling command;
// tests replace it to send their own.
var notifyStop = func(c chan<- os.Signal) { signal.Notify(c, cli.StopSignals...) }
