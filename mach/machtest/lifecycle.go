package machtest

import (
	"slices"
	"syscall"
	"testing"

	"github.com/macprof/macprof/internal/fixture"
	"github.com/macprof/macprof/mach"
)

// plan schedules do at n model steps from now, or, for a task still held
// by its spawn, n steps after SIGCONT (continued rebases the plan); events
// run in order of their step, once the task is not held.
func (tk *Task) plan(n int64, do func()) {
	at := n
	if !tk.stopped {
		at += tk.k.step
	}
	i, _ := slices.BinarySearchFunc(tk.dyldPlan, at, func(e dyldEvent, at int64) int {
		if e.at <= at {
			return -1
		}
		return 1
	})
	tk.dyldPlan = slices.Insert(tk.dyldPlan, i, dyldEvent{at: at, do: do})
}

// PlanExit makes the task exit with status after n model steps of running
// (its last thread returning from main: exit(2), bsd/kern/kern_exit.c
// exit1 → proc_exit → task_terminate_internal), as a command that ends on
// its own does. Like PlanDyldStart, it is called while the task is built
// (in a Launchable, or before the profiler makes a call).
func (tk *Task) PlanExit(n int64, status int) {
	tk.plan(n, func() { tk.exit(syscall.WaitStatus(uint32(status) << 8)) })
}

// PlanExec makes the task's process exec after n model steps of running;
// mk builds the new program's task with Kernel.Exec. It is called while
// the task is built, as PlanExit.
func (tk *Task) PlanExec(n int64, mk func(k *Kernel) *Task) {
	tk.plan(n, func() { mk(tk.k) })
}

// execDeadSteps is how many model steps after an exec the old task's
// ports are destroyed: task_deallocate runs ipc_task_terminate once the
// last reference to the terminated task goes, a moment after the exec.
const execDeadSteps = 4

// Exec gives old's process a new program, as xnu's exec does
// (bsd/kern/kern_exec.c: the image is loaded into a new task made by
// cloneproc(..., CLONEPROC_EXEC); proc_exec_switch_task moves the process,
// and its PID, to that task; then task_terminate_internal(old_task)). The
// task returned has old's PID, the images given and no threads (the
// caller adds them); it is running, and a launched command's exit still
// reaches its parent's wait4. The old task and its threads are disabled at
// once (task_terminate_internal: task->active = false, ipc_task_disable),
// so calls through our ports to them fail as for an exited task, and their
// ports are destroyed execDeadSteps later (our rights become dead names).
// It is called from a PlanExec event, with k.mu held.
func (k *Kernel) Exec(t testing.TB, old *Task, path string, imgs []fixture.TaskImage) *Task {
	nt := &Task{k: k, PID: old.PID, Path: path, exited: old.exited, child: old.child, Cred: old.Cred}
	nt.setImages(t, imgs)
	old.phase = phaseDisabled
	for _, th := range old.Threads {
		th.phase = phaseDisabled
	}
	k.tasks[old.PID] = nt
	nt.plan(execDeadSteps, func() {
		old.phase = phaseDead
		for _, th := range old.Threads {
			th.phase = phaseDead
			k.destroyPort(th)
		}
		k.destroyPort(portObj{task: old})
		k.destroyPort(portObj{task: old, read: true})
	})
	return nt
}

// dlopenBusySteps is how many model steps dyld's image list stays "in
// use" (infoArray NULL) while a dlopen adds its images.
const dlopenBusySteps = 2

// PlanDlopen makes the task's program dlopen imgs after n model steps of
// running (see Dlopen); the list is in use for dlopenBusySteps steps, and
// then, when non-nil, runs once the images are listed: the program's code
// starting to run in them (add threads or stacks there). It is called
// while the task is built, as PlanExit.
func (tk *Task) PlanDlopen(t testing.TB, n int64, imgs []fixture.TaskImage, then func()) {
	tk.plan(n, func() {
		old := tk.mapAdded(t, imgs)
		tk.plan(dlopenBusySteps, func() {
			tk.listAdded(old)
			if then != nil {
				then()
			}
		})
	})
}

// Dlopen adds imgs to the task's images at once, as dyld does for a
// dlopen (dyld-1378 dyld/ExternallyViewableState.cpp addImages): the
// images are mapped (dlopen maps a library before dyld lists it), then
// dyld moves infoArrayChangeTimestamp (updateTimestamp), sets infoArray to
// NULL "to denote it is in-use", builds a new array of the old entries and
// the new ones (its own storage, reallocated: the old array's address is
// freed), stores infoArrayCount, infoArrayChangeTimestamp and the new
// infoArray, and only then calls triggerNotifications (lldb's breakpoint
// function lldb_image_notifier; ExternallyViewableState.h calls the older
// _dyld_debugger_notification historical). dlopen lists the new images
// before any of their code runs (notifyDebuggerLoad(newLoaders): "tell
// debugger about newly loaded images in case there is a crash during
// fixups", before the fixups and initializers).
func (k *Kernel) Dlopen(t testing.TB, tk *Task, imgs []fixture.TaskImage) {
	k.mu.Lock()
	defer k.mu.Unlock()
	tk.listAdded(tk.mapAdded(t, imgs))
}

// mapAdded maps imgs and a new image array listing them, leaves infoArray
// NULL, and returns the old array's address.
func (tk *Task) mapAdded(t testing.TB, imgs []fixture.TaskImage) uint64 {
	old := tk.infos.ArrayAddr
	tk.infos.AddImages(t, imgs).Each(func(addr uint64, data []byte) {
		tk.mapRegion(addr, append([]byte(nil), data...), mach.VMProtRead)
	})
	tk.setInfoArrayUpdating(true)
	return old
}

// listAdded stores the new count and the shared cache's fields, then the
// new infoArray with the next timestamp, and frees the old array.
func (tk *Task) listAdded(oldArray uint64) {
	b, from := tk.infosBytes(), tk.infos.Infos
	copy(b[offInfoArrayCount:offInfoArrayCount+4], from[offInfoArrayCount:])
	copy(b[offCacheFields:offTimestamp], from[offCacheFields:offTimestamp])
	tk.setInfoArrayUpdating(false)
	tk.unmap(oldArray)
}
