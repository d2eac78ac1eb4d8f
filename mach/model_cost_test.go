package mach_test

import (
	"testing"

	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// tickCost is what one sampler tick over every thread costs, counted by
// the model: Threads, Info of each thread, then Capture of each.
type tickCost struct {
	perTick   map[machtest.Call]float64 // calls outside the captures
	perThread map[machtest.Call]float64 // calls inside one capture
	bytes     float64                   // bytes read per capture
}

func measureTick(t *testing.T, w *world, tg target.Target, rounds int) tickCost {
	t.Helper()
	ids, err := tg.Threads(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := target.NewCapture(unwind.DefaultMaxFrames, target.DefaultStackBytes)
	var listing, capturing machtest.Counts
	var bytes int64
	for r := 0; r < rounds; r++ {
		a := w.k.Counts()
		ids, err = tg.Threads(ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if _, err := tg.Info(id); err != nil {
				t.Fatal(err)
			}
		}
		b := w.k.Counts()
		for _, id := range ids {
			if err := tg.Capture(id, c); err != nil {
				t.Fatal(err)
			}
		}
		e := w.k.Counts()
		for i := range listing.Calls {
			listing.Calls[i] += b.Calls[i] - a.Calls[i]
			capturing.Calls[i] += e.Calls[i] - b.Calls[i]
		}
		bytes += e.BytesRead - b.BytesRead
	}
	n := float64(len(ids))
	out := tickCost{perTick: map[machtest.Call]float64{}, perThread: map[machtest.Call]float64{}, bytes: float64(bytes) / float64(rounds) / n}
	for i := machtest.Call(0); i < machtest.NumCalls; i++ {
		if v := listing.Calls[i]; v > 0 {
			out.perTick[i] = float64(v) / float64(rounds)
		}
		if v := capturing.Calls[i]; v > 0 {
			out.perThread[i] = float64(v) / float64(rounds) / n
		}
	}
	return out
}

// TestModelCostPerSample counts, with the model, the Mach calls of a
// continuous capture: per captured thread thread_suspend,
// thread_get_state, one mach_vm_read_overwrite of the stack and
// thread_resume (the stack's region is looked up once per thread); per
// tick one task_threads, one thread_info per thread, and the release of
// the rights and the array task_threads hands out; no allocation in
// steady state. bench/RESULTS.md records the figures it logs.
func TestModelCostPerSample(t *testing.T) {
	w := newWorld(t, "arm64", []chain{chainA, chainB}, []chain{chainC}, []chain{chainD}, []chain{chainA})
	tg := w.attach(t, target.Options{Continuous: true})
	measureTick(t, w, tg, 2) // warm up: names, regions
	cost := measureTick(t, w, tg, 50)
	t.Logf("per captured thread: %v, %.0f bytes read", cost.perThread, cost.bytes)
	t.Logf("per tick of %d threads (outside the captures): %v", len(w.task.Threads), cost.perTick)
	capCalls := 0.0
	for _, v := range cost.perThread {
		capCalls += v
	}
	if capCalls > 4 {
		t.Errorf("%.2f Mach calls per captured thread, want at most 4: %v", capCalls, cost.perThread)
	}
	for _, c := range []machtest.Call{machtest.CallThreadSuspend, machtest.CallThreadGetState, machtest.CallVMReadOverwrite, machtest.CallThreadResume} {
		if cost.perThread[c] != 1 {
			t.Errorf("%v: %.2f per captured thread, want 1", c, cost.perThread[c])
		}
	}
	n := float64(len(w.task.Threads))
	if cost.perTick[machtest.CallTaskThreads] != 1 || cost.perTick[machtest.CallThreadInfo] != n {
		t.Errorf("per tick: %v, want one task_threads and %v thread_info", cost.perTick, n)
	}
	ids, _ := tg.Threads(nil)
	c := target.NewCapture(unwind.DefaultMaxFrames, target.DefaultStackBytes)
	allocs := testing.AllocsPerRun(100, func() {
		ids, _ = tg.Threads(ids)
		for _, id := range ids {
			tg.Info(id)
			tg.Capture(id, c)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per tick (Threads, Info and Capture of %d threads), want 0", allocs, len(ids))
	}
	// Images: one task_info and one read of dyld_all_image_infos when the
	// list did not change.
	if _, err := tg.Images(); err != nil {
		t.Fatal(err)
	}
	a := w.k.Counts()
	if _, err := tg.Images(); err != nil {
		t.Fatal(err)
	}
	b := w.k.Counts()
	t.Logf("Images with no change: %d calls, %d bytes", b.Total()-a.Total(), b.BytesRead-a.BytesRead)
	if b.Calls[machtest.CallTaskInfo]-a.Calls[machtest.CallTaskInfo] != 1 {
		t.Error("Images did not ask TASK_DYLD_INFO exactly once")
	}
}

// TestModelCostUnattended counts an unattended (agent) tick: one
// task_suspend2 and one task_resume2 for the batch, and per captured
// thread only thread_get_state and one mach_vm_read_overwrite.
func TestModelCostUnattended(t *testing.T) {
	w := newWorld(t, "arm64", []chain{chainA}, []chain{chainB}, []chain{chainC}, []chain{chainD})
	tg := w.attach(t, target.Options{Continuous: true, Unattended: true})
	ids, err := tg.Threads(nil)
	if err != nil {
		t.Fatal(err)
	}
	caps := make([]*target.Capture, len(ids))
	for i := range caps {
		caps[i] = target.NewCapture(unwind.DefaultMaxFrames, target.DefaultStackBytes)
	}
	errs := make([]error, len(ids))
	tg.CaptureBatch(ids, caps, errs) // warm up: stack regions
	const rounds = 50
	a := w.k.Counts()
	for r := 0; r < rounds; r++ {
		tg.CaptureBatch(ids, caps, errs)
	}
	b := w.k.Counts()
	per := func(c machtest.Call) float64 { return float64(b.Calls[c]-a.Calls[c]) / rounds }
	n := float64(len(ids))
	t.Logf("per batch of %d threads: task_suspend2 %.0f, task_resume2 %.0f; per thread: thread_get_state %.2f, mach_vm_read_overwrite %.2f, thread_suspend %.2f; %d calls in all",
		len(ids), per(machtest.CallTaskSuspend2), per(machtest.CallTaskResume2), per(machtest.CallThreadGetState)/n,
		per(machtest.CallVMReadOverwrite)/n, per(machtest.CallThreadSuspend)/n, (b.Total()-a.Total())/rounds)
	if per(machtest.CallTaskSuspend2) != 1 || per(machtest.CallTaskResume2) != 1 || per(machtest.CallThreadSuspend) != 0 ||
		per(machtest.CallThreadGetState) != n || per(machtest.CallVMReadOverwrite) != n {
		t.Errorf("unattended batch costs %v calls", b.Total()-a.Total())
	}
	if allocs := testing.AllocsPerRun(100, func() { tg.CaptureBatch(ids, caps, errs) }); allocs != 0 {
		t.Errorf("%v allocations per unattended batch", allocs)
	}
}
