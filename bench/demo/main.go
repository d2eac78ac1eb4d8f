// Command demo is the workload macprof's README profiles: threads with a
// recognisable call tree, so that a profile is easy to check by eye. Each
// worker alternates between sortRecords (via prepareReport, in sort.Ints;
// the wider path) and hashBlocks (via computeChecksums, in crc32), and the
// command prints its throughput when it ends, which the overhead benchmark
// compares with and without a profiler. -regress FUNC=PCT makes one of these
// functions slower by that share, so that macprof diff has a real regression
// to find.
package main

import (
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var units atomic.Int64

// extra holds, per function, the rounds of busy work -regress adds to each
// call; the loop is written out in each function so that the time is that
// function's own, not a callee's.
var extra struct{ hashBlocks, computeChecksums, sortRecords, prepareReport int }

// sink keeps the busy work from being optimised away.
var sink atomic.Int64

//go:noinline
func hashBlocks(buf []byte, rounds int) uint32 {
	var h uint32
	for i := 0; i < rounds; i++ {
		h ^= crc32.ChecksumIEEE(buf)
		buf[i%len(buf)] ^= byte(h)
	}
	if n := extra.hashBlocks; n > 0 {
		x := int64(h)
		for i := 0; i < n; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		sink.Add(x)
	}
	return h
}

//go:noinline
func computeChecksums(buf []byte) uint32 {
	h := hashBlocks(buf, 64)
	if n := extra.computeChecksums; n > 0 {
		x := int64(h)
		for i := 0; i < n; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		sink.Add(x)
	}
	return h
}

//go:noinline
func sortRecords(recs []int, seed int) {
	for i := range recs {
		seed = seed*1103515245 + 12345
		recs[i] = seed
	}
	sort.Ints(recs)
	if n := extra.sortRecords; n > 0 {
		x := int64(seed)
		for i := 0; i < n; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		sink.Add(x)
	}
}

//go:noinline
func prepareReport(recs []int, seed int) {
	sortRecords(recs, seed)
	if n := extra.prepareReport; n > 0 {
		x := int64(seed)
		for i := 0; i < n; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		sink.Add(x)
	}
}

// regress parses -regress's FUNC=PCT and sets that function's extra rounds
// to PCT of the time one call takes, from calls timed without and with a
// known number of rounds in turn (the median ratio), because the machine
// may be busy with other work.
func regress(spec string) (string, error) {
	name, pctText, ok := strings.Cut(spec, "=")
	pct, err := strconv.ParseFloat(strings.TrimSuffix(pctText, "%"), 64)
	if !ok || err != nil || pct <= 0 || pct > 1000 {
		return "", fmt.Errorf("-regress wants FUNC=PCT (e.g. sortRecords=30%%), not %q", spec)
	}
	buf := make([]byte, 4096)
	recs := make([]int, 2048)
	seed := 1 // a new seed each call, as in worker: sorting the same records again is faster
	calls := map[string]struct {
		rounds *int
		call   func()
	}{
		"hashBlocks":       {&extra.hashBlocks, func() { hashBlocks(buf, 64) }},
		"computeChecksums": {&extra.computeChecksums, func() { computeChecksums(buf) }},
		"sortRecords":      {&extra.sortRecords, func() { seed++; sortRecords(recs, seed) }},
		"prepareReport":    {&extra.prepareReport, func() { seed++; prepareReport(recs, seed) }},
	}
	c, ok := calls[name]
	if !ok {
		return "", fmt.Errorf("-regress: unknown function %q (hashBlocks, computeChecksums, sortRecords, prepareReport)", name)
	}
	// Calls without and with a known number of extra rounds, timed in
	// turn so that both see the same load; the median of their ratios.
	const probe, trials = 50000, 101
	ratios := make([]float64, 0, trials)
	var base time.Duration
	for range trials {
		*c.rounds = 0
		start := time.Now()
		c.call()
		t0 := time.Since(start)
		*c.rounds = probe
		start = time.Now()
		c.call()
		if extraTime := time.Since(start) - t0; extraTime > 0 {
			ratios = append(ratios, float64(t0)/float64(extraTime))
		}
		base += t0
	}
	if len(ratios) < trials/2 {
		return "", fmt.Errorf("-regress: could not time %s", name)
	}
	sort.Float64s(ratios)
	*c.rounds = int(pct / 100 * probe * ratios[len(ratios)/2])
	return fmt.Sprintf("regress %s: %d extra rounds per call, +%.0f%% of %v", name, *c.rounds, pct, base/trials), nil
}

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
	slower := flag.String("regress", "", "make `FUNC=PCT` slower by PCT of its time (e.g. sortRecords=30%): a regression for macprof diff to find")
	flag.Parse()
	if *slower != "" {
		msg, err := regress(*slower)
		if err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			os.Exit(2)
		}
		fmt.Println(msg)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var times workerTimes
	parent0, parentKnown := parentCPU()
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
		parent1, _ := parentCPU()
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
		if parentKnown {
			// What the parent (a profiler that launched the demo) used
			// while the workers ran: all that it can take from them.
			fmt.Fprintf(os.Stdout, "parent CPU while the workers ran %.3fms\n", (parent1-parent0).Seconds()*1000)
		}
		if cpu, ok := processCPU(); ok {
			// What the process used in all: a harness takes it from the
			// CPU time of a profiler that ran it to find the profiler's own.
			fmt.Fprintf(os.Stdout, "process CPU %.3fs\n", cpu.Seconds())
		}
		return
	}
	select {}
}
