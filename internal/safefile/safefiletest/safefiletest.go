// Package safefiletest helps tests check that a call on a hostile file
// returns rather than blocks.
package safefiletest

import (
	"testing"
	"time"
)

// Returns runs fn on a goroutine of its own and returns its error; the
// test fails at once when fn has not returned within limit (what names
// the call). fn then stays blocked until the test binary ends.
func Returns(t testing.TB, limit time.Duration, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("%s did not return within %v", what, limit)
		return nil
	}
}
