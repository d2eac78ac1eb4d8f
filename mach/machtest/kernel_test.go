package machtest

import (
	"syscall"
	"testing"

	"github.com/macprof/macprof/mach"
	"github.com/macprof/macprof/unwind"
)

// These tests pin the model's own behaviour to xnu's, call by call,
// independently of the Target that the mach tests drive with it.

func newModelTask(t *testing.T) (*Kernel, *Task, *Thread) {
	k := New()
	tk := k.newTask(50000, "/bin/x")
	th := tk.AddThread("w")
	th.SetStacks(unwind.ArchARM64, 0x170000000, 0x4000, &Stack{PCs: []uint64{0x100004000, 0x100004100, 0x100004200}})
	return k, tk, th
}

// TestRightsAndReferences: each task_threads adds a user reference to the
// same name (ipc_right_copyout); mach_port_deallocate drops one, frees the
// name at zero, and KERN_INVALID_NAME after that; a destroyed port leaves
// a dead name that sends fail on (MACH_SEND_INVALID_DEST) and that is
// still deallocated.
func TestRightsAndReferences(t *testing.T) {
	k, tk, _ := newModelTask(t)
	task, r, _ := k.TaskReadForPID(k.TaskSelf(), tk.PID)
	if r != 0 || task == 0 {
		t.Fatalf("task_read_for_pid: %v %v", task, r)
	}
	l1, p1, kr := k.TaskThreads(task)
	if kr != mach.KernSuccess || len(p1) != 1 {
		t.Fatalf("task_threads: %v %v", p1, kr)
	}
	name := p1[0]
	if kr := k.VMDeallocate(k.TaskSelf(), l1, 4); kr != mach.KernSuccess {
		t.Fatal(kr)
	}
	_, p2, _ := k.TaskThreads(task)
	if p2[0] != name {
		t.Fatalf("second task_threads named the thread %#x, first %#x", p2[0], name)
	}
	if e := k.space[name]; e.urefs != 2 {
		t.Fatalf("urefs %d after two task_threads, want 2", e.urefs)
	}
	if kr := k.VMDeallocate(k.TaskSelf(), l1, 8); kr == mach.KernSuccess {
		t.Error("vm_deallocate with the wrong size succeeded")
	}
	k.VMDeallocate(k.TaskSelf(), l1, 4)
	k.PortDeallocate(k.TaskSelf(), name)
	k.Reap(tk)
	if kr := k.ThreadSuspend(name); kr != mach.MachSendInvalidDest {
		t.Errorf("thread_suspend on a dead name: %v", kr)
	}
	if kr := k.PortDeallocate(k.TaskSelf(), name); kr != mach.KernSuccess {
		t.Errorf("deallocating the dead name: %v", kr)
	}
	if kr := k.PortDeallocate(k.TaskSelf(), name); kr != mach.KernInvalidName {
		t.Errorf("deallocating a freed name: %v, want KERN_INVALID_NAME", kr)
	}
	k.PortDeallocate(k.TaskSelf(), task)
	k.Check(t)
}

// TestSuspension: thread_resume at zero is KERN_FAILURE; a task_suspend2
// token holds every thread and is released by task_resume2, by
// deallocating it, or by the holder's death, which leaves thread_suspend
// counts alone.
func TestSuspension(t *testing.T) {
	k, tk, th := newModelTask(t)
	task, _, _ := k.TaskReadForPID(k.TaskSelf(), tk.PID)
	l, p, _ := k.TaskThreads(task)
	if kr := k.ThreadResume(p[0]); kr != mach.KernFailure {
		t.Errorf("thread_resume at count 0: %v, want KERN_FAILURE", kr)
	}
	tok, kr := k.TaskSuspend2(task)
	if kr != mach.KernSuccess || th.runnable() {
		t.Fatalf("task_suspend2: %v, runnable %v", kr, th.runnable())
	}
	k.TaskResume2(tok)
	if !th.runnable() {
		t.Fatal("still held after task_resume2")
	}
	tok, _ = k.TaskSuspend2(task)
	k.PortDeallocate(k.TaskSelf(), tok)
	if tk.holds != 0 {
		t.Fatal("deallocating the token did not release the hold")
	}
	k.TaskSuspend2(task)
	k.ThreadSuspend(p[0])
	k.VMDeallocate(k.TaskSelf(), l, 4)
	k.Die()
	if tk.holds != 0 || th.UserStop != 1 {
		t.Errorf("after death: holds %d (want 0), user_stop_count %d (want 1)", tk.holds, th.UserStop)
	}
}

// TestFlavorsAndReads: the arm64 kernel refuses x86_THREAD_STATE64 to a
// native caller (KERN_INVALID_ARGUMENT) and serves it to a translated one
// for a Rosetta thread; a read across a hole fails whole
// (KERN_INVALID_ADDRESS); task_read_for_pid returns -1 and ESRCH for no
// process.
func TestFlavorsAndReads(t *testing.T) {
	k, tk, _ := newModelTask(t)
	tk.Translated = true
	task, _, _ := k.TaskReadForPID(k.TaskSelf(), tk.PID)
	_, p, _ := k.TaskThreads(task)
	var st [mach.X86ThreadState64Count]uint32
	if _, kr := k.ThreadGetState(p[0], mach.X86ThreadState64, st[:]); kr != mach.KernInvalidArgument {
		t.Errorf("native caller, x86 flavor: %v", kr)
	}
	k.GOARCHValue, k.ProfilerTranslated = "amd64", true
	if n, kr := k.ThreadGetState(p[0], mach.X86ThreadState64, st[:]); kr != mach.KernSuccess || n != mach.X86ThreadState64Count {
		t.Errorf("translated caller, x86 flavor: %d, %v", n, kr)
	}
	buf := make([]byte, 0x5000)
	if _, kr := k.VMReadOverwrite(task, 0x170000000-0x4000, buf); kr != mach.KernInvalidAddress {
		t.Errorf("read past the stack: %v", kr)
	}
	if _, r, e := k.TaskReadForPID(k.TaskSelf(), 1234567); r != -1 || e != syscall.ESRCH {
		t.Errorf("task_read_for_pid of no process: %d, %v", r, e)
	}
}
