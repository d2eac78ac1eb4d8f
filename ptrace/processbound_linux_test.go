//go:build linux && (amd64 || arm64)

package ptrace

import (
	"runtime"
	"testing"

	"github.com/macprof/macprof/target"
)

// TestProcessRingsMemoryBound: a command whose samples come faster than
// anything is done with them (here 160 MiB of 125-frame callchains through
// two rings, kept while it runs and handed out, as the sampler does, each
// time keep says it holds its most) never makes the Go heap hold more than
// keptBound beyond what it held before: the samples kept and those parsed
// for the sampler are bounded, not the run's length.
func TestProcessRingsMemoryBound(t *testing.T) {
	const ringBytes = 1 << 20
	r0, r1 := fakeRing(ringBytes), fakeRing(ringBytes)
	p := newFakeProcessRings(100, r0, r1)
	p.maxFrames = 128
	pcs := make([]uint64, 125)
	for i := range pcs {
		pcs[i] = 0x400000 + uint64(i)*16
	}
	rec := processRecord(100, 101, pcs...)
	caps := []*target.Capture{target.NewCapture(128, 0), target.NewCapture(128, 0)}

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, uint64(0)
	total := 0
	for total < 160<<20 {
		// Fill both rings half, as the kernel does before it wakes the
		// sampler.
		for _, r := range []*perfRing{r0, r1} {
			for n := 0; n+len(rec) <= ringBytes/2; n += len(rec) {
				r.write(rec)
				total += len(rec)
			}
		}
		if !p.keep() {
			p.collect()
			for _, tid := range []int{101} {
				for p.take(tid, caps) == len(caps) {
				}
			}
		}
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
	}
	grew := int64(peak) - int64(base)
	t.Logf("%d MiB of samples: the heap grew by at most %.1f MiB (bound %d MiB)", total>>20, float64(grew)/(1<<20), keptBound>>20)
	if grew > keptBound {
		t.Errorf("the heap grew by %.1f MiB for %d MiB of samples, more than the bound %d MiB", float64(grew)/(1<<20), total>>20, keptBound>>20)
	}
}
