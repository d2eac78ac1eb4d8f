//go:build linux && (amd64 || arm64)

package ptrace

import (
	"fmt"
	"testing"
)

// TestThreadNamesAtTheTimeOfEachSample: process rings name each sample as
// its thread was named when it was taken, by the records of renames and
// forks in time order, not with the name it had last.
func TestThreadNamesAtTheTimeOfEachSample(t *testing.T) {
	var n threadNames
	n.seed(100, "thr")
	// Out of time order, as rings read one after the other give them.
	n.note(threadCommRecord(100, 101, "rm-a2", 300, false))
	n.note(threadForkRecord(100, 100, 101, 100, 100))
	n.note(threadCommRecord(100, 101, "rm-a", 110, false))
	n.note(threadForkRecord(100, 100, 102, 100, 120))
	n.note(threadCommRecord(100, 102, "rm-b", 121, false))
	n.note(threadCommRecord(100, 102, "rm-b2", 122, false))
	n.apply()
	for _, c := range []struct {
		tid  uint32
		time uint64
		want string
	}{
		{101, 100, "thr"}, {101, 105, "thr"}, {101, 110, "rm-a"}, {101, 299, "rm-a"}, {101, 300, "rm-a2"}, {101, 1 << 40, "rm-a2"},
		{102, 121, "rm-b"}, {102, 500, "rm-b2"},
		{100, 200, ""}, // no record changed it: its name is of's
	} {
		if got := n.at(c.tid, c.time); got != c.want {
			t.Errorf("thread %d at %d: %q, want %q", c.tid, c.time, got, c.want)
		}
	}
	if got := n.of(101); got != "rm-a2" {
		t.Errorf("thread 101 named %q now, want rm-a2", got)
	}

	// The next collect's records start a new history: a thread whose name
	// they did not change is named by of.
	n.note(threadCommRecord(100, 102, "rm-b3", 600, false))
	n.apply()
	if got, got2 := n.at(101, 700), n.at(102, 599); got != "" || got2 != "rm-b2" {
		t.Errorf("after a second collect: thread 101 %q, want \"\"; thread 102 before its rename %q, want rm-b2", got, got2)
	}
}

// TestThreadNamesAtAmongARenamingLoop: a target that renames a thread in a
// loop fills a collect's records with renames; each sample still has the
// name it was taken under.
func TestThreadNamesAtAmongARenamingLoop(t *testing.T) {
	var n threadNames
	for i := range maxNameEvents {
		n.note(threadCommRecord(100, 101, fmt.Sprintf("n%d", i%1000), uint64(10+10*i), false))
	}
	n.apply()
	for i := range maxNameEvents {
		if got, want := n.at(101, uint64(15+10*i)), fmt.Sprintf("n%d", i%1000); got != want {
			t.Fatalf("at %d: %q, want %q", 15+10*i, got, want)
		}
	}
}
