// Command gophases is a test target whose threads are busy at different
// times: one goroutine, locked to its thread, burns CPU in earlyPhase for
// SECONDS and then sleeps as long; another sleeps SECONDS and then burns CPU
// in latePhase as long. A timeline of its threads shows each busy in its
// own half.
//
// Usage: gophases SECONDS
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
)

var sink [16]uint64

//go:noinline
func spin(slot int, end time.Time) {
	for time.Now().Before(end) {
		for i := 0; i < 100000; i++ {
			sink[slot*8] += uint64(i) * 3
		}
	}
}

//go:noinline
func earlyPhase(half time.Duration, start time.Time) {
	spin(0, start.Add(half))
	time.Sleep(time.Until(start.Add(2 * half)))
}

//go:noinline
func latePhase(half time.Duration, start time.Time) {
	time.Sleep(time.Until(start.Add(half)))
	spin(1, start.Add(2*half))
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gophases SECONDS")
		os.Exit(2)
	}
	secs, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil || secs <= 0 || secs > 60 {
		fmt.Fprintln(os.Stderr, "gophases: bad arguments")
		os.Exit(2)
	}
	half := time.Duration(secs * float64(time.Second))
	start := time.Now()
	var wg sync.WaitGroup
	for _, phase := range []func(time.Duration, time.Time){earlyPhase, latePhase} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			phase(half, start)
		}()
	}
	wg.Wait()
}
