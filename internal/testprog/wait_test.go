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
