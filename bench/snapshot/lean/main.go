//go:build linux

// Command lean is `macprof snapshot -p PID` built alone: the snapshot and
// ptrace packages without the rest of macprof (OTLP, gRPC, pprof, the
// diff), so that the snapshot bench can tell what the start-up of the
// whole macprof binary costs a snapshot.
//
//	go build -o lean ./bench/snapshot/lean && ./lean PID
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"

	"github.com/macprof/macprof/ptrace"
	"github.com/macprof/macprof/snapshot"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

func main() {
	pid, err := strconv.Atoi(os.Args[len(os.Args)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: lean PID")
		os.Exit(2)
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(128 << 20)
	snap, err := snapshot.Take(snapshot.Config{PID: pid, Options: target.Options{MaxFrames: unwind.DefaultMaxFrames},
		Attach: func(pid int, o target.Options) (target.Target, error) { return ptrace.Attach(pid, o) }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	snap.WriteText(os.Stdout)
}
