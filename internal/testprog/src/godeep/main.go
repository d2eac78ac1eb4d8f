// Command godeep is a test target: goroutines that recurse to a depth and
// spin there, locked to their threads. It prints "ready" once they spin.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
)

var sink atomic.Uint64
var started atomic.Int32

//go:noinline
func spin() {
	started.Add(1)
	var local [4]uint64
	for i := 0; ; i++ {
		local[i&3]++
		if local[0]&0xffffff == 0 {
			sink.Add(local[1])
		}
	}
}

//go:noinline
func recurse(n int) {
	if n == 0 {
		spin()
	} else {
		recurse(n - 1)
	}
	sink.Add(1)
}

func main() {
	n, depth := 2, 10
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	if len(os.Args) > 2 {
		depth, _ = strconv.Atoi(os.Args[2])
	}
	for i := 0; i < n; i++ {
		go func(d int) {
			runtime.LockOSThread()
			recurse(d)
		}(depth + i*5)
	}
	for started.Load() < int32(n) {
		runtime.Gosched()
	}
	fmt.Println("ready")
	select {}
}
