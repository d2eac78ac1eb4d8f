// Command goexec is a test target: it burns CPU in execLauncherSpin for a
// number of seconds, then execs the program given with its arguments, so a
// profile of it holds two programs' stacks under one PID.
//
// Usage: goexec SECONDS PROGRAM [ARGS...]
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

var sink uint64

//go:noinline
func execLauncherSpin(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 100000; i++ {
			sink += uint64(i) * 7
		}
	}
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: goexec SECONDS PROGRAM [ARGS...]")
		os.Exit(2)
	}
	secs, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goexec:", err)
		os.Exit(2)
	}
	execLauncherSpin(time.Duration(secs * float64(time.Second)))
	err = syscall.Exec(os.Args[2], os.Args[2:], os.Environ())
	fmt.Fprintln(os.Stderr, "goexec: exec:", err, "(spun to", sink, ")")
	os.Exit(1)
}
