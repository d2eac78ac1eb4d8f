package testprog

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// fatalRecorder is a testing.TB whose Fatalf notes the message and ends
// the goroutine, as testing's does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// waitFor runs WaitFor with r as its test, in a goroutine of its own.
func waitFor(r *fatalRecorder, timeout time.Duration, cond func() bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		WaitFor(r, timeout, cond, "the moon")
	}()
	<-done
}

func TestWaitForReturnsWhenTheConditionHolds(t *testing.T) {
	calls := 0
	r := &fatalRecorder{TB: t}
	waitFor(r, time.Minute, func() bool { calls++; return calls == 3 })
	if r.msg != "" || calls != 3 {
		t.Errorf("failed with %q after %d calls; want success at the third", r.msg, calls)
	}
}

func TestWaitForFailsAfterTheTimeout(t *testing.T) {
	r := &fatalRecorder{TB: t}
	start := time.Now()
	waitFor(r, 30*time.Millisecond, func() bool { return false })
	if took := time.Since(start); r.msg != "waited 30ms for the moon" || took < 30*time.Millisecond {
		t.Errorf("failed with %q after %v; want \"waited 30ms for the moon\" after 30ms or more", r.msg, took)
	}
}

func TestPollCallsOnceMoreAfterTheTimeout(t *testing.T) {
	start := time.Now()
	var last time.Time
	if Poll(30*time.Millisecond, func() bool { last = time.Now(); return false }) {
		t.Fatal("Poll reported a condition that never held as held")
	}
	if d := last.Sub(start); d < 30*time.Millisecond {
		t.Errorf("last call %v after the start, want one after the 30ms timeout", d)
	}
	calls := 0
	if !Poll(time.Minute, func() bool { calls++; return calls == 3 }) || calls != 3 {
		t.Errorf("Poll returned after %d calls, want true at the third", calls)
	}
}

func TestPollEveryWaitsTheIntervalBeforeEachCall(t *testing.T) {
	const interval = 20 * time.Millisecond
	var calls []time.Time
	start := time.Now()
	held := PollEvery(time.Minute, interval, func() bool { calls = append(calls, time.Now()); return len(calls) == 3 })
	if !held || len(calls) != 3 {
		t.Fatalf("PollEvery returned %v after %d calls, want true at the third", held, len(calls))
	}
	for i, at := range calls {
		prev := start
		if i > 0 {
			prev = calls[i-1]
		}
		if d := at.Sub(prev); d < interval {
			t.Errorf("call %d came %v after the one before (or the start), want %v or more", i+1, d, interval)
		}
	}
	start = time.Now()
	if PollEvery(50*time.Millisecond, interval, func() bool { return false }) {
		t.Fatal("PollEvery reported a condition that never held as held")
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("gave up after %v, want the 50ms timeout or more", d)
	}
}
