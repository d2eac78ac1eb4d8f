//go:build linux && (amd64 || arm64)

package record

import (
	"slices"
	"strings"
	"testing"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/unwind"
)

// TestRecordWalksLibrariesLoadedLate: a command that runs in libc's qsort
// from its first moments and then in three libraries it dlopens one after
// another, each without frame pointers, is profiled with whole stacks:
// code mapped after macprof last read the memory map is walked with its own
// unwind tables and named, not cut at its first frame as an unnamed
// address (1 in 4 runs of a g++ program lost 1% of its samples so; here 40%
// were lost).
func TestRecordWalksLibrariesLoadedLate(t *testing.T) {
	hopper := testprog.BuildC(t, "hopper.c")
	args := []string{hopper, "0.3", "0.15"}
	for _, name := range []string{"hopa", "hopb", "hopc"} {
		args = append(args, testprog.BuildCShared(t, "hoplib.c", "lib"+name+".so", "-DHOP="+name))
	}
	stacks, summary := recordLaunched(t, 999, unwind.MethodAuto, args...)
	var n, whole int64
	inLib := map[string]int64{}
	for _, s := range stacks {
		if strings.HasPrefix(s.Frames[0], "[lost") || strings.HasPrefix(s.Frames[0], "[unsampled") {
			continue
		}
		n += s.Count
		if slices.Contains(s.Frames, "main") {
			whole += s.Count
		}
		for _, f := range s.Frames {
			if f == "hopa" || f == "hopb" || f == "hopc" || f == "sort_for" {
				inLib[f] += s.Count
			}
		}
	}
	t.Logf("%d samples, %d reaching main, by function %v\n%s", n, whole, inLib, summary)
	for _, f := range []string{"sort_for", "hopa", "hopb", "hopc"} {
		// Each phase's CPU time is 150-300 ms: at least half of it
		// sampled under a function's name, or it was not named.
		if inLib[f] < 60 {
			t.Errorf("%d samples under %s, want at least 60 (of its 150 ms or more)", inLib[f], f)
		}
	}
	if whole < n*95/100 {
		t.Errorf("%d of %d samples (%.1f%%) reach main, want at least 95%%", whole, n, 100*float64(whole)/float64(n))
	}
}
