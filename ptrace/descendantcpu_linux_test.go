//go:build linux && (amd64 || arm64)

package ptrace

import (
	"errors"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
)

// TestDescendantThreadCPUTimeNeverRestarts: a descendant's thread busy in
// bursts and asleep between them for longer than two listings stays
// listed while it sleeps, and its CPU time only grows. Forgotten while
// asleep, it came back with its CPU time restarted from its next samples,
// which the sampler took for CPU time gone backwards: a profile of
// `sh -c 'cyc 20 200 500; true'` held 144% of the tree's CPU time.
func TestDescendantThreadCPUTimeNeverRestarts(t *testing.T) {
	prog := testprog.BuildC(t, "burstsleep.c")
	l := launchWithDescendantRings(t, "/bin/sh", "-c", prog+" 3 150 1000; true")
	type seen struct {
		cpu        time.Duration
		lastListed int
	}
	child := map[target.ThreadID]*seen{}
	var tids []target.ThreadID
	end := time.Now().Add(30 * time.Second)
	listing := 0
	for ; time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		var err error
		tids, err = l.Threads(tids)
		if errors.Is(err, target.ErrExited) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		listing++
		for _, id := range tids {
			info, err := l.Info(id)
			if err != nil || info.PID == 0 || info.PID == l.PID() {
				continue
			}
			s := child[id]
			if s == nil {
				s = &seen{lastListed: listing}
				child[id] = s
			}
			if info.CPUTime < s.cpu {
				t.Errorf("listing %d: thread %d of process %d: CPU time %v, after %v before: gone backwards", listing, id, info.PID, info.CPUTime, s.cpu)
			}
			if listing-s.lastListed > 1 {
				t.Errorf("listing %d: thread %d of process %d listed again after %d listings without it", listing, id, info.PID, listing-s.lastListed-1)
			}
			s.cpu, s.lastListed = max(s.cpu, info.CPUTime), listing
		}
	}
	var most time.Duration
	for _, s := range child {
		most = max(most, s.cpu)
	}
	if most < 300*time.Millisecond {
		t.Errorf("the child's thread was listed with at most %v of CPU time, of its 450 ms: its bursts were not seen", most)
	}
}
