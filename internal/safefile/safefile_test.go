package safefile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/safefile/safefiletest"
)

// TestOpenRefusesWhatIsNotRegular: a FIFO with no writer, a device, a
// directory and a link to a FIFO are refused at once, without blocking.
func TestOpenRefusesWhatIsNotRegular(t *testing.T) {
	fifo := safefiletest.FIFO(t, "fifo")
	dir := filepath.Dir(fifo)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, link, os.DevNull, dir} {
		err := safefiletest.Returns(t, 10*time.Second, "Open("+p+")", func() error {
			f, err := Open(p)
			if err == nil {
				f.Close()
			}
			return err
		})
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open(%s) = %v; want ErrNotRegular", p, err)
		}
	}
	reg := filepath.Join(dir, "reg")
	if err := os.WriteFile(reg, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(reg, link+"2"); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(link+"2", 4, false); err != nil || string(b) != "data" {
		t.Errorf("ReadFile through a link = %q, %v", b, err)
	}
	if _, err := ReadFile(link+"2", 4, true); err == nil {
		t.Error("ReadFile with noFollow followed a link")
	}
	if _, err := ReadFile(reg, 3, false); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile over the limit: %v", err)
	}
}

func TestBudget(t *testing.T) {
	r := Budget(bytes.NewReader(make([]byte, 100)), 10)
	buf := make([]byte, 6)
	if _, err := r.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAt(buf, 50); !errors.Is(err, ErrTooLarge) {
		t.Errorf("read past the budget: %v", err)
	}
}

// TestLater: a call slower than the wait is not waited for, is not started
// twice, and its result comes with a later Get; a group's calls are
// bounded.
func TestLater(t *testing.T) {
	var l Later[string]
	l.MaxPerGroup = 1
	release := make(chan struct{})
	calls := 0
	slow := func() string { calls++; <-release; return "late" }
	if _, ok := l.Get("g", "a", time.Millisecond, slow); ok {
		t.Fatal("a blocked call returned")
	}
	if _, ok := l.Get("g", "b", 0, func() string { return "b" }); ok {
		t.Error("a second call of a full group ran")
	}
	if v, ok := l.Get("h", "c", time.Minute, func() string { return "c" }); !ok || v != "c" {
		t.Errorf("another group's call = %q, %v", v, ok)
	}
	close(release)
	v, ok := l.Get("g", "a", time.Minute, slow)
	if !ok || v != "late" || calls != 1 || l.Running() != 0 {
		t.Errorf("Get after = %q, %v, %d calls, %d running", v, ok, calls, l.Running())
	}
	// A result no Get came for within MaxAge is dropped: its key's
	// next Get calls again.
	l.MaxAge = time.Nanosecond
	gate := make(chan struct{})
	if _, ok := l.Get("g", "e", 0, func() string { <-gate; return "old" }); ok {
		t.Fatal("a blocked call returned")
	}
	l.mu.Lock()
	c := l.running["e"]
	l.mu.Unlock()
	close(gate)
	<-c.done
	time.Sleep(time.Millisecond)
	if v, ok := l.Get("g", "e", time.Minute, func() string { return "new" }); !ok || v != "new" || l.Running() != 0 {
		t.Errorf("a stale result was returned: %q, %v, %d running", v, ok, l.Running())
	}
	if !strings.Contains(notRegular("x", os.ModeNamedPipe).Error(), "FIFO") {
		t.Error("the error does not name a FIFO")
	}
}
