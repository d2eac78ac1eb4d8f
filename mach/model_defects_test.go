package mach_test

import (
	"testing"

	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/target"
)

// TestDyldInfoAskedAgain (issue 12, defect 1): dyld moves
// dyld_all_image_infos into the shared cache right after exec and unmaps
// the old copy, so the address TASK_DYLD_INFO gave is asked again on
// every Images, not cached: a Target that first asked while dyld was
// still on disk (infoArray NULL, list "in use") must find the images at
// the new address.
func TestDyldInfoAskedAgain(t *testing.T) {
	w := newWorld(t, "arm64", []chain{chainA})
	w.k.SetInfoArrayUpdating(w.task, true)
	tg := w.attach(t, target.Options{})
	if set, err := tg.Images(); err == nil && set != nil && set.Len() > 0 {
		t.Fatalf("images read while dyld's list is in use: %d, %v", set.Len(), err)
	}
	w.k.SetInfoArrayUpdating(w.task, false)
	w.k.MoveDyldInfos(w.task, 0x19f000000)
	set, err := tg.Images()
	if err != nil || set == nil || set.Len() != 2 {
		t.Fatalf("Images after dyld moved its list: %v, %v", set, err)
	}
	// And once more, for a Target that had read the list before.
	w.k.MoveDyldInfos(w.task, 0x1a0000000)
	set2, err := tg.Images()
	if err != nil || set2.Len() != 2 {
		t.Fatalf("Images after a second move: %v, %v", set2, err)
	}
}

// capturePanics runs f, which must panic with want.
func capturePanics(t *testing.T, want any, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r == nil || (want != nil && r != want) {
			t.Fatalf("recovered %v, want a panic %v", r, want)
		}
	}()
	f()
}

// TestCapturePanicResumes (issue 12, defect 5): a capture that panics
// between thread_suspend and thread_resume (here inside
// mach_vm_read_overwrite, and inside thread_get_state) resumes the thread
// on the way out; so does a CaptureAll that panics while the task is held.
func TestCapturePanicResumes(t *testing.T) {
	for _, call := range []machtest.Call{machtest.CallVMReadOverwrite, machtest.CallThreadGetState, machtest.CallVMRegion} {
		t.Run(call.String(), func(t *testing.T) {
			w := newWorld(t, "arm64", []chain{chainA})
			tg := w.attach(t, target.Options{Continuous: true})
			ids, err := tg.Threads(nil)
			if err != nil {
				t.Fatal(err)
			}
			w.k.PanicIn = call
			capturePanics(t, nil, func() { tg.Capture(ids[0], target.NewCapture(64, 4096)) })
			if n := w.task.Threads[0].UserStop; n != 0 {
				t.Errorf("thread left suspended (user_stop_count %d) by a panic in %v", n, call)
			}
			w.k.PanicIn = call
			capturePanics(t, nil, func() { tg.CaptureAll(nil) })
			if n := w.task.Threads[0].UserStop; n != 0 {
				t.Errorf("CaptureAll: thread left suspended (user_stop_count %d)", n)
			}
			if h := w.task.Holds(); h != 0 {
				t.Errorf("CaptureAll: task left held (%d)", h)
			}
		})
	}
}

// TestProfilerDies (issue 12, defect 5): a profiler killed while it holds
// a thread. An unattended Target (the agent) holds the task with
// task_suspend2, whose token the kernel drops with the dead profiler's
// port space, so nothing stays suspended; a thread_suspend capture (record,
// whose user watches it) leaves the thread's user_stop_count raised: the
// trade-off docs/DARWIN.md describes.
func TestProfilerDies(t *testing.T) {
	t.Run("unattended", func(t *testing.T) {
		w := newWorld(t, "arm64", []chain{chainA}, []chain{chainB})
		tg := w.attach(t, target.Options{Continuous: true, Unattended: true})
		ids, err := tg.Threads(nil)
		if err != nil {
			t.Fatal(err)
		}
		bc, ok := any(tg).(target.BatchCapturer)
		if !ok {
			t.Fatal("the Target is not a BatchCapturer")
		}
		caps := []*target.Capture{target.NewCapture(64, 4096), target.NewCapture(64, 4096)}
		errs := make([]error, 2)
		bc.CaptureBatch(ids, caps, errs)
		for i, err := range errs {
			if err != nil || len(caps[i].PCs) < 3 {
				t.Fatalf("CaptureBatch: thread %d: %d PCs, %v", ids[i], len(caps[i].PCs), err)
			}
		}
		w.k.DieIn = machtest.CallVMReadOverwrite
		capturePanics(t, machtest.Died, func() { bc.CaptureBatch(ids, caps, errs) })
		for _, th := range w.task.Threads {
			if th.UserStop != 0 {
				t.Errorf("thread %d left suspended by a dead agent", th.ID)
			}
		}
		if h := w.task.Holds(); h != 0 {
			t.Errorf("task left held (%d) by a dead agent", h)
		}
	})
	t.Run("record", func(t *testing.T) {
		w := newWorld(t, "arm64", []chain{chainA})
		tg := w.attach(t, target.Options{Continuous: true})
		ids, err := tg.Threads(nil)
		if err != nil {
			t.Fatal(err)
		}
		w.k.DieIn = machtest.CallVMReadOverwrite
		capturePanics(t, machtest.Died, func() { tg.Capture(ids[0], target.NewCapture(64, 4096)) })
		if n := w.task.Threads[0].UserStop; n != 1 {
			t.Errorf("user_stop_count %d after the profiler died inside a thread_suspend capture, want 1 (xnu releases nothing)", n)
		}
		w.k.ClearUserStops()
	})
}
