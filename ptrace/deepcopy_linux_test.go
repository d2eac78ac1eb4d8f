//go:build linux && (amd64 || arm64)

package ptrace

import (
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// TestKernelSampleCopyGrowsAtOnceToWhatTheWalkRead: by default a thread
// whose walks read its stack after the sample, past an 8 KiB copy, has its
// copy grown in one step to the power of two that holds what they read, up
// to the kernel's limit, after which its samples walk as a stop's walk
// does, none read after the sample. A copy that doubled at each drain
// (16 KiB, then 32 KiB) cut a drain's samples short at each step, and a
// default of 32 KiB left a 49 KiB stack to be read after the sample, where
// a recursion that moves up and down has run on (biome: bench/RESULTS.md).
func TestKernelSampleCopyGrowsAtOnceToWhatTheWalkRead(t *testing.T) {
	for _, c := range []struct {
		name  string
		frame string // bytes each of 12 levels holds
		grown []int  // the copies the ring has, in turn
	}{
		{"19KiB", "1536", []int{perfStackBytes, 32 << 10}},
		{"49KiB", "4096", []int{perfStackBytes, target.MaxKernelStackBytes}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const period = 2 * time.Millisecond
			// cfi: every walk uses the tables and reads after the
			// sample past the copy (auto may move the ring to
			// callchains, deep.c keeping frame pointers).
			opts := target.Options{Continuous: true, Unwind: unwind.MethodCFI, Kernel: target.KernelSampling{Period: period}}
			_, tg := startDeep(t, opts, "1", "12", c.frame)
			tg.kernel.copyFirstWalk = false // as for a thread whose stack deepens after its first capture
			tg.PrepareUnwind()              // as record reads the images first
			tids, _ := tg.Threads(nil)
			tid := worker(t, tg, tids)
			stop := target.NewCapture(512, 64<<10)
			if err := captureStop(t, tg, tid, stop); err != nil || stop.Walk.Stop.Truncated() {
				t.Fatalf("first capture: %v, walk ended %v; want a whole stack", err, stop.Walk.Stop)
			}
			caps := []*target.Capture{target.NewCapture(512, 64<<10)}
			want := c.grown[len(c.grown)-1]
			seen := []int{tg.threads[int(tid)].kernel.ringStack}
			var last []uint64
			var lastRes unwind.Result
			// Drains until a sample was taken with the grown copy, for
			// up to 10 s (a few drains 10 ms apart on an idle machine).
			grew := testprog.PollEvery(10*time.Second, 10*time.Millisecond, func() bool {
				for {
					grown := tg.threads[int(tid)].kernel.ringStack == want
					n, err := tg.DrainSamples(tid, caps)
					if err != nil {
						t.Fatal(err)
					}
					if s := tg.threads[int(tid)].kernel.ringStack; s != seen[len(seen)-1] {
						seen = append(seen, s)
					}
					if n == 0 {
						return false
					}
					if grown {
						last, lastRes = slices.Clone(caps[0].PCs), caps[0].Walk
						return true
					}
				}
			})
			if !slices.Equal(seen, c.grown) {
				t.Fatalf("stack copies %d in turn, want %d", seen, c.grown)
			}
			if !grew {
				t.Fatal("no sample taken with the grown copy")
			}
			if lastRes.Stop.Truncated() || lastRes.AfterSampleFrames != 0 || !slices.Equal(last[1:], stop.PCs[1:]) {
				t.Fatalf("sample with a %d-byte copy: walk %x ended %v, %d frames read after the sample\nstopped walk %x", want, last, lastRes.Stop, lastRes.AfterSampleFrames, stop.PCs)
			}
		})
	}
}

// TestGrownCopy: twice the copy, or the power of two that holds what the
// walks needed.
func TestGrownCopy(t *testing.T) {
	for _, c := range []struct{ have, need, want int }{
		{8 << 10, 0, 16 << 10},
		{8 << 10, 9 << 10, 16 << 10},
		{8 << 10, 16 << 10, 16 << 10},
		{8 << 10, 16<<10 + 8, 32 << 10},
		{8 << 10, 49 << 10, 64 << 10},
		{32 << 10, 1 << 30, 1 << 30},
	} {
		if got := grownCopy(c.have, c.need); got != c.want {
			t.Errorf("grownCopy(%d, %d) = %d, want %d", c.have, c.need, got, c.want)
		}
	}
}
