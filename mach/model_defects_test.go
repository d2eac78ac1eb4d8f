package mach_test

import (
	"errors"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/unwind"

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

// TestFailedAttachReleasesOnce (issue 12, defect 6): an attach that fails
// after the task port was obtained releases it once. The port name is the
// same for every right to one task in our space (xnu ipc_right_copyout
// adds a user reference), so a second release, by a GC cleanup registered
// before the failure, drops the right of another Target of the same task.
func TestFailedAttachReleasesOnce(t *testing.T) {
	w := newWorld(t, "arm64", []chain{chainA})
	a := w.attach(t, target.Options{})
	w.task.FlagsErr = syscall.EIO // kern.proc.pid fails: newTarget fails
	if _, err := mach.AttachKernel(w.k, w.task.PID, target.Options{}); err == nil {
		t.Fatal("attach succeeded despite kern.proc.pid failing")
	}
	w.task.FlagsErr = 0
	for i := 0; i < 20; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := a.Threads(nil); err != nil {
		t.Fatalf("the first Target lost its task port to the failed attach's cleanup: %v (rights %v)", err, w.k.Rights())
	}
}

// TestAttachReturnValues (issue 12, defect 7): task_read_for_pid is a BSD
// system call (-1 and errno), task_for_pid a Mach trap; either may
// succeed with MACH_PORT_NULL (xnu bsd/kern/kern_proc.c), which is a
// failure to fall back from; proc_pidpath returns 0 on any error.
func TestAttachReturnValues(t *testing.T) {
	t.Run("null read port falls back to task_for_pid", func(t *testing.T) {
		w := newWorld(t, "arm64", []chain{chainA})
		w.task.NullReadPort = true
		tg := w.attach(t, target.Options{})
		if _, err := tg.Threads(nil); err != nil {
			t.Fatalf("Threads through the fallback port: %v", err)
		}
	})
	t.Run("null ports are a failure", func(t *testing.T) {
		w := newWorld(t, "arm64", []chain{chainA})
		w.task.NullReadPort, w.task.NullControlPort = true, true
		tg, err := mach.AttachKernel(w.k, w.task.PID, target.Options{})
		if err == nil {
			tg.Release()
			t.Fatal("attach succeeded with MACH_PORT_NULL")
		}
		if !strings.Contains(err.Error(), "MACH_PORT_NULL") {
			t.Errorf("the error does not say the port was null: %v", err)
		}
	})
	t.Run("errno of task_read_for_pid", func(t *testing.T) {
		w := newWorld(t, "arm64", []chain{chainA})
		w.task.DenyRead, w.task.DenyControl = true, true
		_, err := mach.AttachKernel(w.k, w.task.PID, target.Options{})
		if err == nil || !errors.Is(err, mach.ErrPermission) {
			t.Fatalf("attach: %v, want ErrPermission", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "task_read_for_pid: operation not permitted") || strings.Contains(msg, "0xffffffff") {
			t.Errorf("the error does not report task_read_for_pid's errno: %s", msg)
		}
	})
	t.Run("proc_pidpath refused for a live process", func(t *testing.T) {
		w := newWorld(t, "arm64", []chain{chainA})
		w.task.DenyRead, w.task.DenyControl, w.task.HidePath = true, true, true
		_, err := mach.AttachKernel(w.k, w.task.PID, target.Options{})
		if !errors.Is(err, mach.ErrPermission) {
			t.Fatalf("attach: %v, want ErrPermission (the process exists)", err)
		}
		_, err = mach.AttachKernel(w.k, 99999, target.Options{})
		if !errors.Is(err, target.ErrExited) {
			t.Fatalf("attach to no process: %v, want ErrExited", err)
		}
	})
}

// TestRosetta (issue 12, defect 4): a native arm64 profiler asking a
// Rosetta thread for x86_THREAD_STATE64 gets KERN_INVALID_ARGUMENT (xnu
// osfmk/arm64/status.c machine_thread_get_state), which is not a dead
// thread while thread_info still answers: the attach probes one thread and
// says what to do; a capture says the same; an x86_64 macprof run by
// Rosetta reads the registers; and Self checks whether macprof itself is
// translated.
func TestRosetta(t *testing.T) {
	t.Run("native profiler refused at attach", func(t *testing.T) {
		w := newWorld(t, "x86_64", []chain{chainA})
		w.k.GOARCHValue, w.k.VABits = "arm64", 47 // a native arm64 macprof
		w.task.Translated = true
		tg, err := mach.AttachKernel(w.k, w.task.PID, target.Options{})
		if err == nil {
			tg.Release()
			t.Fatal("attach to a Rosetta process succeeded; its captures would all fail")
		}
		if !errors.Is(err, mach.ErrTranslated) || !strings.Contains(err.Error(), "arch -x86_64") {
			t.Errorf("attach: %v, want ErrTranslated with the advice", err)
		}
	})
	t.Run("capture is not a dead thread", func(t *testing.T) {
		w := newWorld(t, "x86_64")
		w.k.GOARCHValue, w.k.VABits = "arm64", 47
		w.task.Translated = true
		tg := w.attach(t, target.Options{}) // no thread to probe yet
		th := w.task.AddThread("late")
		th.SetStacks(unwind.ArchAMD64, stackTop, stackSize, &machtest.Stack{PCs: chainA.pcs(t, symbols(t, "prog_x86_64"), progSlide)})
		ids, err := tg.Threads(nil)
		if err != nil || len(ids) != 1 {
			t.Fatalf("Threads: %v, %v", ids, err)
		}
		err = tg.Capture(ids[0], target.NewCapture(64, 4096))
		if errors.Is(err, target.ErrNoThread) || !errors.Is(err, mach.ErrTranslated) {
			t.Errorf("capture of a live Rosetta thread: %v, want ErrTranslated, not ErrNoThread", err)
		}
	})
	t.Run("translated profiler", func(t *testing.T) {
		w := newWorld(t, "x86_64", []chain{chainA, chainB})
		w.k.GOARCHValue, w.k.ProfilerTranslated = "amd64", true
		w.task.Translated = true
		tg := w.attach(t, target.Options{Continuous: true})
		if tg.Arch() != unwind.ArchAMD64 {
			t.Fatalf("Arch %v", tg.Arch())
		}
		checkStacks(t, w, stacks(t, record(t, tg, 150*time.Millisecond)), 2)
	})
	t.Run("Self under Rosetta", func(t *testing.T) {
		k := machtest.New()
		t.Cleanup(func() { k.Check(t) })
		k.GOARCHValue, k.ProfilerTranslated, k.VABits = "amd64", true, 47
		tg, err := mach.SelfKernel(k, target.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Release()
		if tg.Arch() != unwind.ArchAMD64 {
			t.Errorf("Self of a translated macprof reads %v registers, want x86_64", tg.Arch())
		}
	})
}
