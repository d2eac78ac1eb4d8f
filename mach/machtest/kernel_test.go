package machtest

import (
	"encoding/binary"
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
// for a Rosetta thread, whose ARM_THREAD_STATE64 it serves to both (the
// runtime's registers); a read across a hole fails whole
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
	// ARM_THREAD_STATE64 is served for every 64-bit thread
	// (machine_thread_get_state): a Rosetta thread's is its runtime's.
	var arm [mach.ArmThreadState64Count]uint32
	if n, kr := k.ThreadGetState(p[0], mach.ArmThreadState64, arm[:]); kr != mach.KernSuccess || n != mach.ArmThreadState64Count ||
		uint64(arm[64])|uint64(arm[65])<<32 != RosettaRuntimePC {
		t.Errorf("native caller, arm64 flavor of a Rosetta thread: %d, %v, pc %#x", n, kr, uint64(arm[64])|uint64(arm[65])<<32)
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

// TestStackLayout: a Stack with a Layout puts exactly its words in the
// thread's stack region (zero elsewhere), as mach_vm_read_overwrite reads
// it, and its registers where struct __darwin_arm_thread_state64 (fp, lr,
// sp, pc: words 58, 60, 62, 64) and struct __darwin_x86_thread_state64
// (rbp, rsp, rip: words 12, 14, 32) have them; a word outside the region
// is refused.
func TestStackLayout(t *testing.T) {
	const hi = 0x170000000
	l := &Layout{
		Regs:  unwind.Regs{PC: 0x100004010, SP: hi - 0x48, FP: hi - 0x30, LR: 0x100004104},
		Words: map[uint64]uint64{hi - 0x48: 0x100004208, hi - 0x30: hi - 0x10, hi - 8: 0x5a5a},
	}
	for _, arch := range []string{"arm64", "x86_64"} {
		k := New()
		tk := k.newTask(50000, "/bin/x")
		ua, flavor, n := unwind.ArchARM64, uint32(mach.ArmThreadState64), mach.ArmThreadState64Count
		if arch == "x86_64" {
			k.GOARCHValue, k.VABits = "amd64", 0
			ua, flavor, n = unwind.ArchAMD64, mach.X86ThreadState64, mach.X86ThreadState64Count
		}
		tk.AddThread("w").SetStacks(ua, hi, 0x1000, &Stack{PCs: []uint64{1, 2, 3}, LeafFrame: true, Layout: l})
		task, _, _ := k.TaskReadForPID(k.TaskSelf(), tk.PID)
		arr, p, _ := k.TaskThreads(task)
		st := make([]uint32, n)
		if got, kr := k.ThreadGetState(p[0], flavor, st); kr != mach.KernSuccess || int(got) != n {
			t.Fatalf("%s: thread_get_state: %d, %v", arch, got, kr)
		}
		w := func(i int) uint64 { return uint64(st[i]) | uint64(st[i+1])<<32 }
		if arch == "arm64" {
			if w(58) != l.Regs.FP || w(60) != l.Regs.LR || w(62) != l.Regs.SP || w(64) != l.Regs.PC {
				t.Errorf("arm64 state fp %#x lr %#x sp %#x pc %#x, want %+v", w(58), w(60), w(62), w(64), l.Regs)
			}
		} else if w(12) != l.Regs.FP || w(14) != l.Regs.SP || w(32) != l.Regs.PC {
			t.Errorf("x86_64 state rbp %#x rsp %#x rip %#x, want %+v", w(12), w(14), w(32), l.Regs)
		}
		buf := make([]byte, 0x1000)
		if _, kr := k.VMReadOverwrite(task, hi-0x1000, buf); kr != mach.KernSuccess {
			t.Fatalf("%s: reading the stack: %v", arch, kr)
		}
		for off := 0; off < len(buf); off += 8 {
			a := uint64(hi - 0x1000 + off)
			if got := binary.LittleEndian.Uint64(buf[off:]); got != l.Words[a] {
				t.Errorf("%s: word at %#x is %#x, want %#x", arch, a, got, l.Words[a])
			}
		}
		k.VMDeallocate(k.TaskSelf(), arr, 4)
		k.PortDeallocate(k.TaskSelf(), p[0])
		k.PortDeallocate(k.TaskSelf(), task)
		k.Check(t)
	}
	defer func() {
		if recover() == nil {
			t.Error("a Layout word outside the stack region was accepted")
		}
	}()
	New().newTask(50001, "/bin/y").AddThread("w").SetStacks(unwind.ArchAMD64, hi, 0x1000,
		&Stack{Layout: &Layout{Words: map[uint64]uint64{hi - 4: 1}}})
}

// TestVirtualCopyClips: a mach_vm_read_overwrite of up to
// msg_ool_size_small bytes (32 KiB on an arm64 kernel, 16 KiB on x86_64)
// leaves the target's map as it was; a larger one is the virtual copy of
// vm_map_copyin_internal: the entry is clipped at the page-rounded range,
// mach_vm_region returns the pieces, and Check reports it.
func TestVirtualCopyClips(t *testing.T) {
	for _, c := range []struct {
		goarch      string
		limit, page uint64
	}{{"arm64", 32 << 10, 16 << 10}, {"amd64", 16 << 10, 4 << 10}} {
		t.Run(c.goarch, func(t *testing.T) {
			k := New()
			k.GOARCHValue = c.goarch
			tk := k.newTask(50000, "/bin/x")
			const lo, size = 0x170000000, 256 << 10
			tk.mapRegion(lo, make([]byte, size), mach.VMProtRead|mach.VMProtWrite)
			binary.LittleEndian.PutUint64(tk.regionAt(lo + 100<<10).data[100<<10:], 0xfeed)
			task, _, _ := k.TaskReadForPID(k.TaskSelf(), tk.PID)
			region := func(addr uint64) (uint64, uint64) {
				var info mach.VMRegionBasicInfo64Data
				s, n, _, kr := k.VMRegion(task, addr, &info)
				if kr != mach.KernSuccess {
					t.Fatalf("mach_vm_region(%#x): %v", addr, kr)
				}
				return s, n
			}
			addr := uint64(lo + 100<<10 - 8)
			if n, kr := k.VMReadOverwrite(task, addr, make([]byte, c.limit)); kr != mach.KernSuccess || n != c.limit {
				t.Fatalf("read of %d bytes: %d, %v", c.limit, n, kr)
			}
			if s, n := region(addr); s != lo || n != size || len(k.VirtualCopies()) != 0 {
				t.Fatalf("after a read of msg_ool_size_small bytes: region [%#x, +%#x), copies %v; want the whole entry, none", s, n, k.VirtualCopies())
			}
			buf := make([]byte, c.limit+1)
			if n, kr := k.VMReadOverwrite(task, addr, buf); kr != mach.KernSuccess || n != c.limit+1 {
				t.Fatalf("read of %d bytes: %d, %v", c.limit+1, n, kr)
			}
			if v := binary.LittleEndian.Uint64(buf[8:]); v != 0xfeed {
				t.Errorf("read %#x, want 0xfeed", v)
			}
			first, last := addr&^(c.page-1), (addr+c.limit+1+c.page-1)&^(c.page-1)
			for _, want := range [][3]uint64{{lo, lo, first - lo}, {addr, first, last - first}, {last, last, lo + size - last}} {
				if s, n := region(want[0]); s != want[1] || n != want[2] {
					t.Errorf("mach_vm_region(%#x) = [%#x, +%#x), want the clipped piece [%#x, +%#x)", want[0], s, n, want[1], want[2])
				}
			}
			if len(k.VirtualCopies()) != 1 || k.Counts().LargestRead != int64(c.limit+1) {
				t.Errorf("virtual copies %v, largest read %d", k.VirtualCopies(), k.Counts().LargestRead)
			}
			// Reads across the pieces still see one memory.
			if _, kr := k.VMReadOverwrite(task, lo+100<<10, buf[:8]); kr != mach.KernSuccess || binary.LittleEndian.Uint64(buf) != 0xfeed {
				t.Errorf("read across the pieces: %v", kr)
			}
			k.PortDeallocate(k.TaskSelf(), task)
		})
	}
}

// TestExitingThreadsAndTasks: a thread whose port is disabled but which is
// still on task->threads is listed as MACH_PORT_NULL, which
// mach_port_deallocate accepts; a call that converted its task port
// before task_terminate_internal finds the task inactive: task_threads
// KERN_FAILURE, task_info KERN_INVALID_ARGUMENT, and a thread call
// KERN_TERMINATED; after the exit the ports convert to nothing
// (KERN_INVALID_ARGUMENT).
func TestExitingThreadsAndTasks(t *testing.T) {
	k, tk, th := newModelTask(t)
	th2 := tk.AddThread("w2")
	th2.SetStacks(unwind.ArchARM64, 0x171000000, 0x4000, &Stack{PCs: []uint64{0x100004000, 0x100004100}})
	task, _, _ := k.TaskReadForPID(k.TaskSelf(), tk.PID)
	k.DisableThread(th)
	arr, p, kr := k.TaskThreads(task)
	if kr != mach.KernSuccess || len(p) != 2 || p[0] != 0 || p[1] == 0 {
		t.Fatalf("task_threads with a disabled thread: %#x, %v; want [MACH_PORT_NULL, a right]", p, kr)
	}
	if kr := k.PortDeallocate(k.TaskSelf(), 0); kr != mach.KernSuccess {
		t.Errorf("mach_port_deallocate(MACH_PORT_NULL): %v, want KERN_SUCCESS", kr)
	}
	k.VMDeallocate(k.TaskSelf(), arr, 8)
	k.PortDeallocate(k.TaskSelf(), p[1])
	k.PortDeallocate(k.TaskSelf(), task)
	k.Check(t)
	var k2 *Kernel
	var task2, live uint32
	var info [mach.TaskDyldInfoCount]uint32
	for _, c := range []struct {
		call Call
		do   func() mach.KernReturn
		want mach.KernReturn
	}{
		{CallTaskThreads, func() mach.KernReturn { _, _, kr := k2.TaskThreads(task2); return kr }, mach.KernFailure},
		{CallTaskInfo, func() mach.KernReturn { _, kr := k2.TaskInfo(task2, mach.TaskDyldInfo, info[:]); return kr }, mach.KernInvalidArgument},
		{CallThreadGetState, func() mach.KernReturn {
			_, kr := k2.ThreadGetState(live, mach.ArmThreadState64, make([]uint32, mach.ArmThreadState64Count))
			return kr
		}, mach.KernTerminated},
	} {
		var tk2 *Task
		k2, tk2, _ = newModelTask(t)
		task2, _, _ = k2.TaskReadForPID(k2.TaskSelf(), tk2.PID)
		arr, p, _ := k2.TaskThreads(task2)
		live = p[0]
		k2.VMDeallocate(k2.TaskSelf(), arr, 4)
		k2.ExitIn, k2.ExitTask = c.call, tk2
		if kr := c.do(); kr != c.want {
			t.Errorf("%v in flight when the task is killed: %v, want %v", c.call, kr, c.want)
		}
		if kr := c.do(); kr != mach.KernInvalidArgument {
			t.Errorf("%v after the kill: %v, want KERN_INVALID_ARGUMENT", c.call, kr)
		}
		k2.PortDeallocate(k2.TaskSelf(), live)
		k2.PortDeallocate(k2.TaskSelf(), task2)
		k2.Check(t)
	}
}
