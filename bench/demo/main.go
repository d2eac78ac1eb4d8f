// Command demo is the workload macprof's README profiles: threads with a
// recognisable call tree, so that a profile is easy to check by eye. Each
// worker alternates between sortRecords (via prepareReport, in sort.Ints;
// the wider path) and hashBlocks (via computeChecksums, in crc32), and the
// command prints its throughput when it ends, which the overhead benchmark
// compares with and without a profiler.
package main

import (
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

var units atomic.Int64

//go:noinline
func hashBlocks(buf []byte, rounds int) uint32 {
	var h uint32
	for i := 0; i < rounds; i++ {
		h ^= crc32.ChecksumIEEE(buf)
		buf[i%len(buf)] ^= byte(h)
	}
	return h
}

//go:noinline
func computeChecksums(buf []byte) uint32 { return hashBlocks(buf, 64) }

//go:noinline
func sortRecords(recs []int, seed int) {
	for i := range recs {
		seed = seed*1103515245 + 12345
		recs[i] = seed
	}
	sort.Ints(recs)
}

//go:noinline
func prepareReport(recs []int, seed int) { sortRecords(recs, seed) }

// workerTimes sums, over the workers, the wall time each ran for and the
// CPU time its thread was given (in user and in system mode).
type workerTimes struct {
	mu              sync.Mutex
	wall, user, sys time.Duration
	known           bool // the platform reports per-thread CPU time
}

//go:noinline
func worker(stop *atomic.Bool, times *workerTimes) {
	runtime.LockOSThread()
	buf := make([]byte, 4096)
	recs := make([]int, 2048)
	start := time.Now()
	user0, sys0, known := threadCPU()
	for seed := 1; !stop.Load(); seed++ {
		computeChecksums(buf)
		prepareReport(recs, seed)
		units.Add(1)
	}
	user1, sys1, _ := threadCPU()
	wall := time.Since(start)
	times.mu.Lock()
	defer times.mu.Unlock()
	times.wall += wall
	times.user += user1 - user0
	times.sys += sys1 - sys0
	times.known = known
}

func main() {
	threads := flag.Int("threads", 2, "number of busy worker threads")
	duration := flag.Duration("duration", 5*time.Second, "how long to run (0: until killed)")
	flag.Parse()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var times workerTimes
	start := time.Now()
	for i := 0; i < *threads; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); worker(&stop, &times) }()
	}
	fmt.Println("ready")
	if *duration > 0 {
		time.Sleep(*duration)
		stop.Store(true)
		wg.Wait()
		el := time.Since(start).Seconds()
		fmt.Fprintf(os.Stdout, "throughput %.1f units/s over %.2fs with %d threads\n", float64(units.Load())/el, el, *threads)
		if times.known && times.wall > 0 {
			// The share of their time the workers were on a CPU: what a
			// profiler takes from them (stops, and CPU it uses itself)
			// shows here without the noise of the work's speed, which on a
			// shared machine varies from run to run far more than that.
			fmt.Fprintf(os.Stdout, "workers ran %.3f%% of their time (user %.3f%%, system %.3f%%)\n",
				100*(times.user+times.sys).Seconds()/times.wall.Seconds(),
				100*times.user.Seconds()/times.wall.Seconds(), 100*times.sys.Seconds()/times.wall.Seconds())
		}
		return
	}
	select {}
}
