//go:build linux && (amd64 || arm64)

package ptrace

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
)

// countSIGCHLD counts the SIGCHLDs that arrive while f runs (and shortly
// after, for signals in flight).
func countSIGCHLD(t *testing.T, f func()) int {
	t.Helper()
	ch := make(chan os.Signal, 1024)
	signal.Notify(ch, syscall.SIGCHLD)
	defer signal.Stop(ch)
	f()
	time.Sleep(50 * time.Millisecond)
	return len(ch)
}

func captureN(t *testing.T, tg *Target, n int) {
	t.Helper()
	tids, err := tg.Threads(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := target.NewCapture(512, 64<<10)
	for i := 0; i < n; i++ {
		if err := captureStop(t, tg, worker(t, tg, tids), c); err != nil {
			t.Fatal(err)
		}
	}
}

func TestContinuousCapturesSendNoSIGCHLD(t *testing.T) {
	p := testprog.Start(t, testprog.BuildC(t, "deep.c"), "1", "10")
	cont, err := Attach(p.PID, target.Options{Continuous: true})
	if err != nil {
		t.Fatal(err)
	}
	if on, err := noCldStop(); err != nil || !on {
		t.Errorf("SA_NOCLDSTOP with a continuous target open: %v, %v; want set", on, err)
	}
	if n := countSIGCHLD(t, func() { captureN(t, cont, 20) }); n != 0 {
		t.Errorf("20 continuous captures delivered %d SIGCHLDs, want 0", n)
	}

	// A persistent target needs the signals: it turns them back on while
	// it is open, even with the continuous one still open.
	q := testprog.Start(t, testprog.BuildC(t, "deep.c"), "1", "10")
	pers, err := Attach(q.PID, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if on, _ := noCldStop(); on {
		t.Error("SA_NOCLDSTOP still set with a persistent target open")
	}
	if n := countSIGCHLD(t, func() { captureN(t, pers, 5) }); n == 0 {
		t.Error("persistent captures delivered no SIGCHLD: the test cannot tell the two apart")
	}
	if err := pers.Close(); err != nil {
		t.Fatal(err)
	}
	if on, _ := noCldStop(); !on {
		t.Error("SA_NOCLDSTOP not set again once only a continuous target is open")
	}
	if err := cont.Close(); err != nil {
		t.Fatal(err)
	}
	if on, _ := noCldStop(); on {
		t.Error("SA_NOCLDSTOP left set after every target closed")
	}
}
