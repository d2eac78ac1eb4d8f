// Command gobusy is a test target: THREADS goroutines, each locked to its
// thread, burn CPU in execTargetSpin for SECONDS.
//
// Usage: gobusy THREADS SECONDS
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
)

var sink [64]uint64

//go:noinline
func execTargetSpin(slot int, end time.Time) {
	for time.Now().Before(end) {
		for i := 0; i < 100000; i++ {
			sink[slot*8] += uint64(i) * 3
		}
	}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gobusy THREADS SECONDS")
		os.Exit(2)
	}
	n, err1 := strconv.Atoi(os.Args[1])
	secs, err2 := strconv.ParseFloat(os.Args[2], 64)
	if err1 != nil || err2 != nil || n < 1 || n > 8 {
		fmt.Fprintln(os.Stderr, "gobusy: bad arguments")
		os.Exit(2)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			execTargetSpin(i, end)
		}()
	}
	wg.Wait()
}
