// Command demo is the workload macprof's README profiles: several threads
// with a recognisable call tree. Each worker alternates between sortRecords
// (via prepareReport; about four fifths of its time, in sort.Ints) and
// hashBlocks (via computeChecksums; about one fifth, in crc32), so a profile
// should show those two call paths and nothing much else. It prints its throughput (work units per second) when
// it ends, which the overhead benchmark compares with and without a
// profiler.
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

//go:noinline
func worker(stop *atomic.Bool) {
	runtime.LockOSThread()
	buf := make([]byte, 4096)
	recs := make([]int, 2048)
	for seed := 1; !stop.Load(); seed++ {
		computeChecksums(buf)
		prepareReport(recs, seed)
		units.Add(1)
	}
}

func main() {
	threads := flag.Int("threads", 2, "number of busy worker threads")
	duration := flag.Duration("duration", 5*time.Second, "how long to run (0: until killed)")
	flag.Parse()
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < *threads; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); worker(&stop) }()
	}
	fmt.Println("ready")
	if *duration > 0 {
		time.Sleep(*duration)
		stop.Store(true)
		wg.Wait()
		el := time.Since(start).Seconds()
		fmt.Fprintf(os.Stdout, "throughput %.1f units/s over %.2fs with %d threads\n", float64(units.Load())/el, el, *threads)
		return
	}
	select {}
}
