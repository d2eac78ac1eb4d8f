package testprog

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, and fails the test saying what it
// waited for when cond still does not hold after timeout. It polls every
// millisecond at first, backing off to every 10 ms, so that a cheap
// condition is seen at once and a costly one (a read of /proc) does not
// load the machine. Call it from the test's goroutine.
func WaitFor(t testing.TB, timeout time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; !cond(); wait = min(2*wait, 10*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", timeout, what)
		}
		time.Sleep(wait)
	}
}
