package testprog

import (
	"testing"
	"time"
)

// WaitFor polls cond as Poll does, and fails the test saying what it
// waited for when cond still does not hold after timeout. Call it from
// the test's goroutine.
func WaitFor(t testing.TB, timeout time.Duration, cond func() bool, what string) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("waited %v for %s", timeout, what)
	}
}

// Poll calls cond until it holds or timeout has passed (cond is called
// once more after that), and reports whether it held; a test that fails
// then says how far the wait got, from what cond saw. It polls every
// millisecond at first, backing off to every 10 ms, so that a cheap
// condition is seen at once and a costly one (a read of /proc) does not
// load the machine.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; !cond(); wait = min(2*wait, 10*time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait)
	}
	return true
}

// PollEvery is Poll with cond called every interval, the first time after
// one interval: for a condition that needs time to pass between calls,
// such as a drain of kernel samples that should find some, or one that
// costs more than a read of a file or two to check (a walk of /proc).
func PollEvery(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		time.Sleep(interval)
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
