package mach_test

import (
	"errors"
	"testing"
	"time"

	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/target"
)

// TestThreadListNullPorts: task_threads lists a thread that is exiting,
// its port already disabled, as MACH_PORT_NULL (xnu
// convert_thread_to_port_with_flavor). The Target neither asks it for
// thread_info nor releases it (no right was given), releases the right it
// held to that thread, and keeps capturing the others; the attach probe
// of a Rosetta target skips it and still finds the flavor refused.
func TestThreadListNullPorts(t *testing.T) {
	t.Run("listing", func(t *testing.T) {
		w := newWorld(t, "arm64", []chain{chainA}, []chain{chainB})
		tg := w.attach(t, target.Options{})
		ids, err := tg.Threads(nil)
		if err != nil || len(ids) != 2 {
			t.Fatalf("Threads: %v, %v", ids, err)
		}
		w.k.DisableThread(w.task.Threads[0])
		a := w.k.Counts()
		ids, err = tg.Threads(ids)
		b := w.k.Counts()
		if err != nil || len(ids) != 1 || uint64(ids[0]) != w.task.Threads[1].ID {
			t.Fatalf("Threads with an exiting thread: %v, %v; want thread %d alone", ids, err, w.task.Threads[1].ID)
		}
		// One extra reference of the live thread and the right to the
		// exiting one: two mach_port_deallocate, no thread_info.
		if n := b.Calls[machtest.CallThreadInfo] - a.Calls[machtest.CallThreadInfo]; n != 0 {
			t.Errorf("%d thread_info calls for a listing of known threads and MACH_PORT_NULL, want 0", n)
		}
		if n := b.Calls[machtest.CallPortDeallocate] - a.Calls[machtest.CallPortDeallocate]; n != 2 {
			t.Errorf("%d mach_port_deallocate calls, want 2", n)
		}
		if r := w.k.Rights(); len(r) != 2 {
			t.Errorf("rights %v, want the task's and the live thread's", r)
		}
		if err := tg.Capture(ids[0], target.NewCapture(64, 4096)); err != nil {
			t.Errorf("Capture of the live thread: %v", err)
		}
	})
	t.Run("Rosetta probe", func(t *testing.T) {
		w := newWorld(t, "x86_64", []chain{chainA}, []chain{chainB})
		w.k.GOARCHValue, w.k.VABits = "arm64", 47
		w.task.Translated = true
		w.k.DisableThread(w.task.Threads[0])
		tg, err := mach.AttachKernel(w.k, w.task.PID, target.Options{})
		if err == nil {
			tg.Release()
		}
		if !errors.Is(err, mach.ErrTranslated) {
			t.Errorf("attach to a Rosetta task whose first listed thread is exiting: %v, want ErrTranslated", err)
		}
	})
}

// TestInactiveTask: a task killed while task_threads is in flight (the
// call converted the port first) answers KERN_FAILURE (task.c
// task_threads_internal); the Target reports the task exited, not a
// thread error, and releases everything.
func TestInactiveTask(t *testing.T) {
	w := newWorld(t, "arm64", []chain{chainA})
	tg := w.attach(t, target.Options{})
	if _, err := tg.Threads(nil); err != nil {
		t.Fatal(err)
	}
	w.k.ExitIn, w.k.ExitTask = machtest.CallTaskThreads, w.task
	_, err := tg.Threads(nil)
	var me *mach.Error
	if !errors.As(err, &me) || me.Code != mach.KernFailure || !errors.Is(err, target.ErrExited) {
		t.Errorf("Threads of a task killed in task_threads: %v, want KERN_FAILURE reported as ErrExited", err)
	}
}

// TestRosettaArmState: the kernel serves ARM_THREAD_STATE64 for a Rosetta
// thread (machine_thread_get_state refuses it only to 32-bit threads), so
// a wrong flavor choice would not fail but sample Rosetta's runtime. The
// Target of a translated macprof asks x86_THREAD_STATE64: every sample is
// one of the program's chains, none at the runtime's PC.
func TestRosettaArmState(t *testing.T) {
	w := newWorld(t, "x86_64", []chain{chainA, chainB})
	w.k.GOARCHValue, w.k.ProfilerTranslated = "amd64", true
	w.task.Translated = true
	tg := w.attach(t, target.Options{Continuous: true})
	ids, err := tg.Threads(nil)
	if err != nil || len(ids) != 1 {
		t.Fatalf("Threads: %v, %v", ids, err)
	}
	c := target.NewCapture(64, 4096)
	if err := tg.Capture(ids[0], c); err != nil {
		t.Fatal(err)
	}
	if c.Regs.PC == machtest.RosettaRuntimePC {
		t.Errorf("the capture read Rosetta's arm64 state (pc %#x), not the program's x86_64 one", c.Regs.PC)
	}
	checkStacks(t, w, stacks(t, record(t, tg, 150*time.Millisecond)), 2)
}
