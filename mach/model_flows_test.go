package mach_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/internal/testprog"
	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/mach/machtest"
	"github.com/macprof/macprof/snapshot"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// TestModelSnapshot takes CaptureAll snapshots: one task_suspend2 and one
// task_resume2 around the captures, no thread_suspend, every thread's
// stack one of its chains, and the hold released.
func TestModelSnapshot(t *testing.T) {
	w := newWorld(t, "arm64", []chain{chainA, chainB}, []chain{chainC}, []chain{chainD})
	tg := w.attach(t, target.Options{})
	var caps []target.Capture
	for i := 0; i < 5; i++ {
		before := w.k.Counts()
		var err error
		caps, err = tg.CaptureAll(caps)
		if err != nil {
			t.Fatal(err)
		}
		d := w.k.Counts()
		if n := d.Calls[machtest.CallTaskSuspend2] - before.Calls[machtest.CallTaskSuspend2]; n != 1 {
			t.Errorf("%d task_suspend2 calls, want 1", n)
		}
		if n := d.Calls[machtest.CallTaskResume2] - before.Calls[machtest.CallTaskResume2]; n != 1 {
			t.Errorf("%d task_resume2 calls, want 1", n)
		}
		if n := d.Calls[machtest.CallThreadSuspend] - before.Calls[machtest.CallThreadSuspend]; n != 0 {
			t.Errorf("%d thread_suspend calls in a task_suspend2 snapshot", n)
		}
		if len(caps) != 3 {
			t.Fatalf("%d captures, want 3", len(caps))
		}
		for _, c := range caps {
			if c.Err != nil || len(c.PCs) < 3 {
				t.Errorf("thread %d: %d PCs, %v", c.Thread, len(c.PCs), c.Err)
			}
		}
	}
}

// selfWorld makes the model's profiler task itself hold the fixture
// images and two threads besides the calling one.
func selfWorld(t *testing.T) *world {
	t.Helper()
	k := machtest.New()
	w := &world{k: k, arch: unwind.ArchARM64, chains: [][]chain{{chainA, chainB}, {chainC}}}
	self := k.Self()
	k.SetImages(t, self, []fixture.TaskImage{{File: machoFixture("prog_arm64"), Path: "/Users/dev/prog", Slide: progSlide}})
	syms := symbols(t, "prog_arm64")
	for i, cs := range w.chains {
		th := self.AddThread("self-worker")
		th.Busy = true
		var stacks []*machtest.Stack
		for _, c := range cs {
			stacks = append(stacks, &machtest.Stack{PCs: c.pcs(t, syms, progSlide)})
		}
		th.SetStacks(w.arch, stackTop-uint64(i)*stackApart, stackSize, stacks...)
	}
	w.task = self
	t.Cleanup(func() { k.Check(t) })
	return w
}

// TestModelSelf runs Self mode's logic against the model: the calling
// thread is never listed, captured or suspended, every other thread is
// captured through the suspend-state-read-resume sequence, and the
// mach_thread_self rights are all released.
func TestModelSelf(t *testing.T) {
	w := selfWorld(t)
	tg, err := mach.SelfKernel(w.k, target.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Release()
	ids, err := tg.Threads(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 {
		t.Fatalf("Threads listed %d threads, want the 2 that are not the caller", len(ids))
	}
	for _, id := range ids {
		if uint64(id) == w.k.CurrentThread.ID {
			t.Fatal("the calling thread is listed")
		}
	}
	caps, err := tg.CaptureAll(nil)
	if err != nil || len(caps) != 2 {
		t.Fatalf("CaptureAll: %d captures, %v", len(caps), err)
	}
	for _, c := range caps {
		if c.Err != nil || len(c.PCs) < 3 {
			t.Errorf("thread %d: %d PCs, %v", c.Thread, len(c.PCs), c.Err)
		}
	}
	win := record(t, tg, 200*time.Millisecond)
	checkStacks(t, w, stacks(t, win), 2)
	tg.Release()
}

// TestModelLaunch runs the launch flow against the model up to and past
// the spawn: posix_spawn START_SUSPENDED, attach, SIGCONT; dyld then keeps
// its image list "in use" for a moment and moves it into the shared cache
// (as dyld does right after exec). A recording that lasts past the
// sampler's second image refresh must come out symbolized, and the exit
// status is the command's.
func TestModelLaunch(t *testing.T) {
	k := machtest.New()
	t.Cleanup(func() { k.Check(t) })
	exe := executableFile(t)
	syms := symbols(t, "prog_arm64")
	w := &world{k: k, arch: unwind.ArchARM64, chains: [][]chain{{chainA, chainB}}}
	k.Launchable(exe, func(k *machtest.Kernel) *machtest.Task {
		tk := k.SpawnedTask(t, exe, []fixture.TaskImage{{File: machoFixture("prog_arm64"), Path: exe, Slide: progSlide}})
		th := tk.AddThread("main")
		th.Busy = true
		th.SetStacks(w.arch, stackTop, stackSize,
			&machtest.Stack{PCs: chainA.pcs(t, syms, progSlide)}, &machtest.Stack{PCs: chainB.pcs(t, syms, progSlide)})
		tk.PlanDyldStart(30, 60, 0x19f000000)
		w.task = tk
		return tk
	})
	l, err := mach.LaunchCommandKernel(k, []string{exe}, target.Options{Continuous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	win := record(t, l, 1300*time.Millisecond)
	checkStacks(t, w, stacks(t, win), 2)
	k.Exit(w.task, 3)
	if code := l.Wait(); code != 3 {
		t.Errorf("Wait: %d, want 3", code)
	}
}

// TestModelThreadsExit lets threads exit while the sampler runs, at every
// phase xnu goes through (KERN_TERMINATED from thread_act.c, then
// KERN_INVALID_ARGUMENT once ipc_thread_disable ran, then a dead name):
// the recording goes on, no right is leaked, and a capture of a dead
// thread is ErrNoThread.
func TestModelThreadsExit(t *testing.T) {
	w := newWorld(t, "arm64", []chain{chainA}, []chain{chainB}, []chain{chainC}, []chain{chainD})
	tg := w.attach(t, target.Options{Continuous: true})
	ths := w.task.Threads
	for i, th := range ths[:3] {
		w.k.ExitThreadAfter(th, int64(20+40*i))
	}
	win := record(t, tg, 300*time.Millisecond)
	got := stacks(t, win)
	checkStacks(t, w, got, 1)
	ids, err := tg.Threads(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || uint64(ids[0]) != ths[3].ID {
		t.Errorf("threads left %v, want only %d", ids, ths[3].ID)
	}
	c := target.NewCapture(64, 4096)
	if err := tg.Capture(target.ThreadID(ths[0].ID), c); !errors.Is(err, target.ErrNoThread) {
		t.Errorf("capture of an exited thread: %v", err)
	}
	t.Logf("missed: %v", win.Missed)
}

// TestModelTaskExit ends the task while it is sampled: the sampler stops,
// Threads says ErrExited, and Release drops the rights, dead names
// included.
func TestModelTaskExit(t *testing.T) {
	w := newWorld(t, "arm64", []chain{chainA}, []chain{chainB})
	tg := w.attach(t, target.Options{Continuous: true})
	if _, err := tg.Threads(nil); err != nil {
		t.Fatal(err)
	}
	w.k.Exit(w.task, 0)
	if _, err := tg.Threads(nil); !errors.Is(err, target.ErrExited) {
		t.Errorf("Threads after exit: %v", err)
	}
	w.k.Reap(w.task)
	if _, err := tg.Threads(nil); !errors.Is(err, target.ErrExited) {
		t.Errorf("Threads after the ports died: %v", err)
	}
	tg.Close()
}

// TestModelTaskKilledDuringCapture kills the task inside each call of a
// capture and of a snapshot: the call fails as xnu fails it (the task
// port converts to TASK_NULL: KERN_INVALID_ARGUMENT; thread_act.c:
// KERN_TERMINATED), the capture reports ErrExited, and the rights are
// still all released.
func TestModelTaskKilledDuringCapture(t *testing.T) {
	for _, call := range []machtest.Call{machtest.CallThreadSuspend, machtest.CallThreadGetState,
		machtest.CallVMRegion, machtest.CallVMReadOverwrite, machtest.CallThreadResume, machtest.CallTaskSuspend2} {
		t.Run(call.String(), func(t *testing.T) {
			w := newWorld(t, "arm64", []chain{chainA}, []chain{chainB})
			tg := w.attach(t, target.Options{})
			ids, err := tg.Threads(nil)
			if err != nil {
				t.Fatal(err)
			}
			w.k.ExitIn, w.k.ExitTask = call, w.task
			if call == machtest.CallTaskSuspend2 {
				caps, err := tg.CaptureAll(nil)
				for _, c := range caps {
					if err == nil && c.Err == nil {
						t.Errorf("a snapshot of a killed task captured thread %d", c.Thread)
					}
				}
			} else {
				err := tg.Capture(ids[0], target.NewCapture(64, 4096))
				if call != machtest.CallThreadResume && !errors.Is(err, target.ErrExited) {
					t.Errorf("capture while the task was killed in %v: %v, want ErrExited", call, err)
				}
			}
			if _, err := tg.Threads(nil); !errors.Is(err, target.ErrExited) {
				t.Errorf("Threads of the killed task: %v", err)
			}
		})
	}
}

// TestModelSnapshotCommand runs the snapshot command's logic
// (snapshot.Take: attach, images, names, CaptureAll, Close, symbolize)
// against the model: every thread's frames are its chain, by name. Take
// closes but does not Release the Target (symbols are read from the task
// after Close), so the task port goes with the GC cleanup: the model's
// check, after the Target is unreachable, proves that path releases it.
func TestModelSnapshotCommand(t *testing.T) {
	w := newWorld(t, "x86_64", []chain{chainA}, []chain{chainB}, []chain{chainD})
	snap, err := snapshot.Take(snapshot.Config{PID: w.task.PID, Options: target.Options{MaxFrames: 64},
		Attach: func(pid int, o target.Options) (target.Target, error) { return mach.AttachKernel(w.k, pid, o) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Threads) != 3 || len(snap.Missing) != 0 {
		t.Fatalf("snapshot: %d threads, missing %q", len(snap.Threads), snap.Missing)
	}
	for i, th := range snap.Threads {
		var names []string
		for _, f := range th.Frames {
			names = append(names, f.Function)
		}
		if want := []string(w.chains[i][0]); !slices.Equal(names, want) {
			t.Errorf("thread %d (%s): frames %q, want %q", th.TID, th.Name, names, want)
		}
	}
	snap = nil
	// Collects until the Target's cleanup ran; the world's check says
	// what is left.
	testprog.PollEvery(3*time.Second, 10*time.Millisecond, func() bool {
		runtime.GC()
		return len(w.k.Rights()) == 0
	})
}

// TestModelLaunchAttachRefused: a launched command whose task port is
// refused is killed and reaped before Launch returns the error, and holds
// nothing.
func TestModelLaunchAttachRefused(t *testing.T) {
	k := machtest.New()
	t.Cleanup(func() { k.Check(t) })
	exe := executableFile(t)
	var task *machtest.Task
	k.Launchable(exe, func(k *machtest.Kernel) *machtest.Task {
		task = k.SpawnedTask(t, exe, []fixture.TaskImage{{File: machoFixture("prog_arm64"), Path: exe, Slide: progSlide}})
		task.AddThread("main")
		task.DenyRead, task.DenyControl = true, true
		return task
	})
	_, err := mach.LaunchKernel(k, []string{exe}, nil, target.Options{})
	if !errors.Is(err, mach.ErrPermission) {
		t.Fatalf("Launch: %v, want ErrPermission", err)
	}
	if err := k.Kill(task.PID, 0); err == nil {
		t.Error("the refused command was not killed and reaped")
	}
}

// executableFile makes a file Launch's exec.LookPath accepts; what runs is
// the model's Launchable registered under its path.
func executableFile(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}
