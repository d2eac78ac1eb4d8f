// Command goswitch reads the clock in a loop on the main thread, for
// TestWalkCFIAcrossGoStackSwitch: Go calls the vDSO on g0's stack (the
// thread's own, for the main thread), its caller's frames lie in the
// goroutine's stack.
package main

import (
	"runtime"
	"time"
)

// The main goroutine stays on the main thread, the one the test samples.
func init() { runtime.LockOSThread() }

var sink int64

//go:noinline
func spin() {
	for i := 0; i < 1000; i++ {
		sink += time.Now().UnixNano() & 1
	}
}

func main() {
	end := time.Now().Add(60 * time.Second)
	for time.Now().Before(end) {
		spin()
	}
}
