package sampler

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestTickFDWaitsForItsDeadlineAndItsSignals(t *testing.T) {
	tf, err := newTickFD()
	if err != nil {
		t.Fatal(err)
	}
	defer tf.close()
	wake, now := make(chan struct{}, 1), make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer context.AfterFunc(ctx, tf.kick)()

	start := time.Now()
	if ev := tf.await(ctx, start.Add(20*time.Millisecond), wake, now); ev != waitTick {
		t.Fatalf("await = %v, want a tick", ev)
	}
	if got := time.Since(start); got < 20*time.Millisecond {
		t.Fatalf("a tick due in 20 ms came after %v", got)
	}

	// A kick with no signal (its signal taken already) is no tick.
	go func() {
		time.Sleep(5 * time.Millisecond)
		tf.kick()
	}()
	start = time.Now()
	if ev := tf.await(ctx, start.Add(60*time.Millisecond), wake, now); ev != waitTick {
		t.Fatalf("await = %v, want a tick", ev)
	}
	if got := time.Since(start); got < 60*time.Millisecond {
		t.Fatalf("a kick without a signal ended a wait for 60 ms after %v", got)
	}

	// Each signal, sent and kicked while the wait sleeps, ends it.
	for _, c := range []struct {
		ch   chan struct{}
		want waitEvent
	}{{wake, waitWake}, {now, waitDrainNow}} {
		go func() {
			time.Sleep(5 * time.Millisecond)
			c.ch <- struct{}{}
			tf.kick()
		}()
		if ev := tf.await(ctx, time.Now().Add(time.Hour), wake, now); ev != c.want {
			t.Fatalf("await = %v, want %v", ev, c.want)
		}
	}
	go func() {
		time.Sleep(5 * time.Millisecond)
		cancel()
	}()
	if ev := tf.await(ctx, time.Now().Add(time.Hour), wake, now); ev != waitDone {
		t.Fatalf("await = %v after the context ended, want waitDone", ev)
	}
}

func TestTickFDWaitDoesNotAllocate(t *testing.T) {
	tf, err := newTickFD()
	if err != nil {
		t.Fatal(err)
	}
	defer tf.close()
	wake, now := make(chan struct{}, 1), make(chan struct{}, 1)
	ctx := context.Background()
	tf.await(ctx, time.Now().Add(100*time.Microsecond), wake, now)
	allocs := testing.AllocsPerRun(20, func() {
		tf.await(ctx, time.Now().Add(100*time.Microsecond), wake, now)
	})
	if allocs != 0 {
		t.Fatalf("a wait allocates %.1f times", allocs)
	}
}

// TestTickFDWakesFewerThreadsThanAGoTimer: ticks from the timerfd wake one
// thread each (the one waiting in the poller), ticks from a Go timer also
// wake the runtime's sysmon, which sleeps only until the next Go timer.
// Both count the voluntary context switches of all of this process's
// threads over the same number of ticks.
func TestTickFDWakesFewerThreadsThanAGoTimer(t *testing.T) {
	const ticks, every = 150, 2 * time.Millisecond
	wake, now := make(chan struct{}, 1), make(chan struct{}, 1)
	ctx := context.Background()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	goTimer := func() {
		for range ticks {
			awaitTimer(ctx, timer, time.Now().Add(every), wake, now)
		}
	}
	tf, err := newTickFD()
	if err != nil {
		t.Fatal(err)
	}
	defer tf.close()
	timerFD := func() {
		for range ticks {
			tf.await(ctx, time.Now().Add(every), wake, now)
		}
	}
	var withTimer, withFD []int
	for range 3 { // alternated, the least of each
		withTimer = append(withTimer, switchesOver(t, goTimer))
		withFD = append(withFD, switchesOver(t, timerFD))
	}
	tm, fd := minOf(withTimer), minOf(withFD)
	t.Logf("voluntary switches over %d ticks: Go timer %v, timerfd %v", ticks, withTimer, withFD)
	if fd > tm-ticks/2 {
		t.Fatalf("%d ticks woke threads %d times with the timerfd, %d with a Go timer: want at least %d fewer", ticks, fd, tm, ticks/2)
	}
}

// switchesOver returns the voluntary context switches of all of this
// process's threads while f ran.
func switchesOver(t *testing.T, f func()) int {
	t.Helper()
	before := voluntarySwitches(t)
	f()
	return voluntarySwitches(t) - before
}

func voluntarySwitches(t *testing.T) int {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(tasks) == 0 {
		t.Fatalf("list this process's threads: %v", err)
	}
	n := 0
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // a thread gone
		}
		const key = "\nvoluntary_ctxt_switches:"
		i := bytes.Index(b, []byte(key))
		if i < 0 {
			t.Fatalf("%s has no voluntary_ctxt_switches", p)
		}
		v := bytes.TrimSpace(b[i+len(key):])
		if j := bytes.IndexByte(v, '\n'); j >= 0 {
			v = v[:j]
		}
		c, err := strconv.Atoi(string(v))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		n += c
	}
	return n
}

func minOf(v []int) int {
	m := v[0]
	for _, x := range v[1:] {
		m = min(m, x)
	}
	return m
}
