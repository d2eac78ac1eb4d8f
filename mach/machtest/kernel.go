// Package machtest is a model of the xnu kernel's Mach and BSD surface that
// the darwin backend calls (mach.Kernel), so that the backend's logic runs
// on Linux against tasks, threads, port rights and memory that behave as
// xnu's do. Each behaviour cites the xnu (xnu-11417), dyld (dyld-1378) or
// Libc/libsyscall source it follows; where Apple publishes no source
// (Rosetta 2) the comment says so. A Kernel also counts every call and
// byte read, and Check asserts that the profiler left no port right, no
// kernel-allocated array and no suspension behind.
package machtest

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/macprof/macprof/mach"
)

// Call names a Kernel method, for counting and fault injection.
type Call int

// The calls a Kernel counts.
const (
	CallTaskForPID Call = iota
	CallTaskReadForPID
	CallTaskThreads
	CallTaskSuspend2
	CallTaskResume2
	CallTaskInfo
	CallThreadSuspend
	CallThreadResume
	CallThreadGetState
	CallThreadInfo
	CallVMReadOverwrite
	CallVMRegion
	CallPortDeallocate
	CallVMDeallocate
	CallThreadSelf
	NumCalls
)

var callNames = [NumCalls]string{"task_for_pid", "task_read_for_pid", "task_threads", "task_suspend2",
	"task_resume2", "task_info", "thread_suspend", "thread_resume", "thread_get_state", "thread_info",
	"mach_vm_read_overwrite", "mach_vm_region", "mach_port_deallocate", "vm_deallocate", "mach_thread_self"}

func (c Call) String() string { return callNames[c] }

// Counts are the calls made and bytes read so far.
type Counts struct {
	Calls     [NumCalls]int
	BytesRead int64
	// LargestRead is the most bytes one mach_vm_read_overwrite copied.
	LargestRead int64
}

// Total is the number of Mach calls counted.
func (c Counts) Total() int {
	n := 0
	for _, v := range c.Calls {
		n += v
	}
	return n
}

// Kernel is the model. Its zero value is not usable: call New.
type Kernel struct {
	mu sync.Mutex
	// self is the profiler's own task: its port space holds the rights the
	// profiler is given.
	self     *Task
	selfName uint32
	tasks    map[int]*Task
	space    map[uint32]*entry
	names    map[any]uint32 // object -> the name of our send right to it
	// Port names are index << 8 | generation (osfmk/ipc/ipc_entry.h
	// MACH_PORT_MAKE, IE_BITS_GEN); freed indices are reused last freed
	// first with the generation advanced (ipc_entry.c ipc_entry_claim,
	// ipc_entry_dealloc), so a name's value comes back after 64 reuses.
	nextIdx  uint32
	freeIdx  []uint32
	gens     []uint32
	freeEnts []*entry
	arrays   map[uintptr][]uint32 // task_threads arrays in our address space
	// virtualCopies are the reads that clipped a task's map entries.
	virtualCopies []string
	nextArr       uintptr
	nextPID       int
	nextTID       uint64
	step          int64
	counts        Counts

	launchable map[string]func(*Kernel) *Task

	// GOARCHValue is the architecture the profiler's code runs as, and
	// ProfilerTranslated whether it runs under Rosetta 2
	// (sysctl.proc_translated).
	GOARCHValue        string
	ProfilerTranslated bool
	// VABits is machdep.virtual_address_size (0: absent, as on Intel).
	VABits uint32
	// EUID and EGID are the profiler's (0: root), Env its environment
	// (Getenv), and Users the accounts LookupUser finds.
	EUID, EGID int
	Env        map[string]string
	Users      map[int]mach.UserInfo
	// CurrentThread is the thread the profiler calls from (Self mode).
	CurrentThread *Thread
	// PanicIn makes the next call of that kind panic, as a profiler that
	// crashes inside a capture; -1 for none.
	PanicIn Call
	// ExitIn makes ExitTask exit inside the next call of that kind (the
	// task is killed while the profiler is in the call); -1 for none. A
	// call that takes a task or thread port has converted it by then and
	// holds a reference, as a call that races with task_terminate_internal
	// does: it finds the task or thread inactive (see convert).
	ExitIn   Call
	ExitTask *Task
	// exitArmed: ExitIn came, for a call that converts a port first.
	exitArmed bool
	// DieIn makes the profiler die inside the next call of that kind
	// (see Die); -1 for none.
	DieIn Call
	// hooks run once, at the start of the next call of their kind (see
	// OnCall).
	hooks [NumCalls]func()
	// dead: the profiler died. Its port space is empty, so the calls
	// the test's deferred code still makes after the "death" name
	// nothing and change nothing (MACH_SEND_INVALID_DEST,
	// KERN_INVALID_NAME), as a dead process makes no calls at all.
	dead bool
}

// RosettaRuntimePC is the PC the model's ARM_THREAD_STATE64 of a Rosetta
// thread holds: an address in no image of the program.
const RosettaRuntimePC = 0x7ff8_0000_1000

// Died is the panic value of a profiler that "died" in a call (DieIn).
const Died = "machtest: the profiler died"

// entry is a right in the profiler's port space (osfmk/ipc/ipc_entry.h).
type entry struct {
	obj      any
	urefs    int
	sendOnce bool // a send-once right (the suspension token)
	dead     bool // a dead name: the port was destroyed
}

// portObj is what a task port names: the task and whether the right is a
// read port (task_read_for_pid) or the control port (task_for_pid).
type portObj struct {
	task *Task
	read bool
}

// token is a task_suspend2 suspension token (osfmk/kern/task.c
// task_suspend2_grp: a reference on the task, handed out as a send-once
// right to its resume port).
type token struct{ task *Task }

// New returns a model kernel whose profiler is an arm64 process (pid
// os.Getpid()) with one thread, the caller's.
func New() *Kernel {
	k := &Kernel{
		tasks:       make(map[int]*Task),
		space:       make(map[uint32]*entry),
		names:       make(map[any]uint32),
		arrays:      make(map[uintptr][]uint32),
		nextIdx:     1,
		gens:        []uint32{0},
		nextArr:     0x600000000000,
		nextPID:     40000,
		nextTID:     0x1000,
		GOARCHValue: "arm64",
		VABits:      47,
		PanicIn:     -1,
		DieIn:       -1,
		ExitIn:      -1,
	}
	k.self = k.newTask(os.Getpid(), "/usr/local/bin/macprof")
	k.CurrentThread = k.self.AddThread("macprof-main")
	// mach_task_self_ is a send right the task holds for its life; the
	// model never counts it as leaked.
	k.selfName = k.copyoutSend(portObj{task: k.self})
	return k
}

// Self is the profiler's own task, for Self-mode tests.
func (k *Kernel) Self() *Task { return k.self }

// Counts returns the calls and bytes counted so far.
func (k *Kernel) Counts() Counts {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.counts
}

// enter counts a call, advances the model's clock (threads that run move
// between their stacks and threads scheduled to exit do), and panics if
// the call is PanicIn. It returns with k.mu held.
func (k *Kernel) enter(c Call) {
	k.mu.Lock()
	if f := k.hooks[c]; f != nil {
		k.hooks[c] = nil
		k.mu.Unlock()
		f()
		k.mu.Lock()
	}
	k.counts.Calls[c]++
	k.step++
	for _, t := range k.tasks {
		t.advance(k.step)
	}
	if k.ExitIn == c && k.ExitTask != nil {
		// task_terminate_internal (osfmk/kern/task.c) of a task that is
		// being read: the call sees the task and its threads inactive.
		k.ExitIn = -1
		if convertsPort(c) {
			k.exitArmed = true
		} else {
			k.ExitTask.exit(syscall.WaitStatus(uint32(syscall.SIGKILL)))
		}
	}
	if k.PanicIn == c {
		k.PanicIn = -1
		k.mu.Unlock()
		panic(fmt.Sprintf("machtest: the profiler crashed inside %v", c))
	}
	if k.DieIn == c {
		k.DieIn = -1
		k.die()
		k.mu.Unlock()
		panic(Died)
	}
}

// OnCall runs f once, at the start of the next call of kind c, before
// the call does anything: what another goroutine of the profiler does
// while one of its threads is inside that call. f may call the Kernel.
func (k *Kernel) OnCall(c Call, f func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.hooks[c] = f
}

// copyoutSend gives the profiler a send right to obj: the name it already
// has for obj with one more user reference, or a new name with one
// (osfmk/ipc/ipc_right.c ipc_right_copyout, MACH_MSG_TYPE_PORT_SEND: "if
// the entry already has a send right, its urefs are incremented").
func (k *Kernel) copyoutSend(obj any) uint32 {
	if n, ok := k.names[obj]; ok {
		if e := k.space[n]; e != nil && !e.dead {
			e.urefs++
			return n
		}
	}
	n := k.newName()
	k.space[n] = k.newEntry(obj, false)
	k.names[obj] = n
	return n
}

func (k *Kernel) newName() uint32 {
	if len(k.freeIdx) > 0 {
		idx := k.freeIdx[len(k.freeIdx)-1]
		k.freeIdx = k.freeIdx[:len(k.freeIdx)-1]
		k.gens[idx] = (k.gens[idx] + 4) & 0xff
		return idx<<8 | k.gens[idx]
	}
	idx := k.nextIdx
	k.nextIdx++
	k.gens = append(k.gens, 3)
	return idx<<8 | 3
}

func (k *Kernel) newEntry(obj any, sendOnce bool) *entry {
	var e *entry
	if n := len(k.freeEnts); n > 0 {
		e, k.freeEnts = k.freeEnts[n-1], k.freeEnts[:n-1]
	} else {
		e = new(entry)
	}
	*e = entry{obj: obj, urefs: 1, sendOnce: sendOnce}
	return e
}

// freeName removes name from the space and frees its entry.
func (k *Kernel) freeName(name uint32) {
	e := k.space[name]
	delete(k.space, name)
	k.freeIdx = append(k.freeIdx, name>>8)
	if e != nil {
		k.freeEnts = append(k.freeEnts, e)
	}
}

// lookup resolves a name for a message send: MACH_SEND_INVALID_DEST for a
// dead name or a name the space does not hold
// (osfmk/ipc/ipc_kmsg.c ipc_kmsg_copyin_header; mig returns the send
// error as the routine's result).
func (k *Kernel) lookup(name uint32) (any, mach.KernReturn) {
	e := k.space[name]
	if e == nil || e.dead {
		return nil, mach.MachSendInvalidDest
	}
	return e.obj, mach.KernSuccess
}

// portTask converts a task port to its task as MIG does
// (osfmk/kern/ipc_tt.c convert_port_to_task_*): TASK_NULL once
// ipc_task_disable ran, which the routines answer with
// KERN_INVALID_ARGUMENT (e.g. osfmk/kern/task.c task_threads_from_user).
func (k *Kernel) portTask(name uint32) (*Task, mach.KernReturn) {
	return convert(k, name, func(p portObj) (*Task, int) { return p.task, p.task.phase })
}

// activeThread converts a thread port as portTask does a task port
// (osfmk/kern/ipc_tt.c convert_port_to_thread_*, ipc_thread_disable), and
// answers KERN_TERMINATED for a thread that is no longer active, as every
// routine of osfmk/kern/thread_act.c does ("if (thread->active) ... else
// result = KERN_TERMINATED").
func (k *Kernel) activeThread(name uint32) (*Thread, mach.KernReturn) {
	th, kr := convert(k, name, func(th *Thread) (*Thread, int) { return th, th.phase })
	if kr == mach.KernSuccess && th.phase >= phaseTerminating {
		return nil, mach.KernTerminated
	}
	return th, kr
}

// convertsPort reports the calls whose MIG routine converts a task or
// thread port to its object before it runs.
func convertsPort(c Call) bool {
	switch c {
	case CallTaskThreads, CallTaskSuspend2, CallTaskInfo, CallThreadSuspend, CallThreadResume,
		CallThreadGetState, CallThreadInfo, CallVMReadOverwrite, CallVMRegion:
		return true
	}
	return false
}

// convert looks name up and converts its object to what a routine takes:
// MIG_TYPE_ERROR for a port of another kind, KERN_INVALID_ARGUMENT once
// the object's port was disabled. An exit armed by ExitIn happens right
// after the conversion: the routine holds its reference and finds the
// task inactive (task->active false, osfmk/kern/task.c
// task_terminate_internal), each routine answering that as xnu does.
func convert[P, T any](k *Kernel, name uint32, to func(P) (T, int)) (T, mach.KernReturn) {
	var zero T
	obj, kr := k.lookup(name)
	if kr != mach.KernSuccess {
		return zero, kr
	}
	p, ok := obj.(P)
	if !ok {
		return zero, mach.MigTypeError
	}
	t, phase := to(p)
	if phase >= phaseDisabled {
		return zero, mach.KernInvalidArgument
	}
	if k.exitArmed {
		k.exitArmed = false
		k.ExitTask.exit(syscall.WaitStatus(uint32(syscall.SIGKILL)))
	}
	return t, mach.KernSuccess
}

// destroyPort turns the profiler's right to obj into a dead name
// (osfmk/ipc/ipc_right.c ipc_right_check: a send right to a dead port is
// converted to a dead name, keeping its user references).
func (k *Kernel) destroyPort(obj any) {
	if n, ok := k.names[obj]; ok {
		if e := k.space[n]; e != nil {
			e.dead = true
		}
		delete(k.names, obj)
	}
}

// --- mach.Kernel ---

// TaskSelf implements mach.Kernel.
func (k *Kernel) TaskSelf() uint32 { return k.selfName }

// ThreadSelf is mach_thread_self(): a new send right to the calling thread
// (osfmk/kern/ipc_tt.c thread_self_trap: convert_thread_to_port,
// ipc_port_copyout_send).
func (k *Kernel) ThreadSelf() uint32 {
	k.enter(CallThreadSelf)
	defer k.mu.Unlock()
	return k.copyoutSend(k.CurrentThread)
}

// GOARCH implements mach.Kernel.
func (k *Kernel) GOARCH() string { return k.GOARCHValue }

// TaskForPID follows bsd/kern/kern_proc.c task_for_pid: a Mach trap
// returning KERN_FAILURE when there is no such process or it is refused,
// and KERN_SUCCESS with MACH_PORT_NULL when the process has no task yet
// ("if (proc_task(p) == TASK_NULL) { error = KERN_SUCCESS; goto tfpout; }").
func (k *Kernel) TaskForPID(self uint32, pid int) (uint32, mach.KernReturn) {
	k.enter(CallTaskForPID)
	defer k.mu.Unlock()
	t := k.tasks[pid]
	switch {
	case t == nil || t.phase >= phaseDisabled:
		return 0, mach.KernFailure
	case t.DenyControl:
		return 0, mach.KernFailure
	case t.NullControlPort:
		return 0, mach.KernSuccess
	}
	return k.copyoutSend(portObj{task: t}), mach.KernSuccess
}

// TaskReadForPID follows bsd/kern/kern_proc.c task_read_for_pid: a BSD
// system call (bsd/kern/syscalls.master 539) whose libsyscall stub returns
// -1 and sets errno (ESRCH: no process, EPERM: refused), and which returns
// 0 with MACH_PORT_NULL when the process has no task, or when
// convert_task_read_to_port gives IP_NULL ("could be IP_NULL").
func (k *Kernel) TaskReadForPID(self uint32, pid int) (uint32, int32, syscall.Errno) {
	k.enter(CallTaskReadForPID)
	defer k.mu.Unlock()
	t := k.tasks[pid]
	switch {
	case t == nil || t.phase >= phaseDisabled:
		return 0, -1, syscall.ESRCH
	case t.DenyRead:
		return 0, -1, syscall.EPERM
	case t.NullReadPort:
		return 0, 0, 0
	}
	return k.copyoutSend(portObj{task: t, read: true}), 0, 0
}

// TaskThreads follows osfmk/kern/task.c task_threads_internal:
// KERN_FAILURE for a task no longer active ("if (!task->active)"), else
// every thread on task->threads, each converted to a port and copied out
// as a new send right (convert_thread_array_to_ports; our existing name
// gains a user reference), in an array allocated in the caller's address
// space (NULL when there are none), which the caller must vm_deallocate.
// A thread whose port ipc_thread_disable disabled (thread_terminate_self,
// osfmk/kern/thread.c) stays on task->threads until
// thread_terminate_queue_invoke removes it, and converts to IP_NULL
// (osfmk/kern/ipc_tt.c convert_thread_to_port_with_flavor: "if
// (!thread->ipc_active) goto exit"): its entry is MACH_PORT_NULL.
func (k *Kernel) TaskThreads(task uint32) (uintptr, []uint32, mach.KernReturn) {
	k.enter(CallTaskThreads)
	defer k.mu.Unlock()
	t, kr := k.portTask(task)
	if kr != mach.KernSuccess {
		return 0, nil, kr
	}
	if t.phase != phaseAlive {
		return 0, nil, mach.KernFailure
	}
	// The array's memory: the task's last one when it was given back (an
	// allocator reuses freed memory), so that the model allocates nothing
	// in steady state.
	addr := t.arrAddr
	if addr == 0 || k.arrays[addr] != nil {
		k.nextArr += 0x4000
		addr = k.nextArr
		t.arrAddr, t.arrBuf = addr, nil
	}
	ports := t.arrBuf[:0]
	for _, th := range t.Threads {
		// task_threads_internal walks task->threads, where a thread
		// stays until thread_terminate_queue_invoke removes it: a
		// terminating thread is listed too, and one whose port is
		// disabled as MACH_PORT_NULL.
		switch {
		case th.phase < phaseDisabled:
			ports = append(ports, k.copyoutSend(th))
		case th.phase == phaseDisabled:
			ports = append(ports, 0)
		}
	}
	t.arrBuf = ports
	if len(ports) == 0 {
		return 0, nil, mach.KernSuccess
	}
	k.arrays[addr] = ports
	return addr, ports, mach.KernSuccess
}

// TaskSuspend2 follows osfmk/kern/task.c task_suspend2_grp: a hold on the
// task (task_suspend_internal) and a token, a send-once right to its
// resume port. task_suspend2 takes a task_read_t (osfmk/mach/task.defs), so
// a read port is enough.
func (k *Kernel) TaskSuspend2(task uint32) (uint32, mach.KernReturn) {
	k.enter(CallTaskSuspend2)
	defer k.mu.Unlock()
	t, kr := k.portTask(task)
	if kr != mach.KernSuccess {
		return 0, kr
	}
	if t.phase >= phaseTerminating {
		// task_hold_and_wait: "if (!task->active) ... return KERN_FAILURE"
		return 0, mach.KernFailure
	}
	t.holds++
	if t.token == nil {
		t.token = &token{task: t}
	}
	n := k.newName()
	k.space[n] = k.newEntry(t.token, true)
	return n, mach.KernSuccess
}

// TaskResume2 follows osfmk/kern/task.c task_resume2_grp: it releases the
// hold and consumes the token.
func (k *Kernel) TaskResume2(tok uint32) mach.KernReturn {
	k.enter(CallTaskResume2)
	defer k.mu.Unlock()
	e := k.space[tok]
	if e == nil {
		return mach.MachSendInvalidDest
	}
	tk, ok := e.obj.(*token)
	if !ok || !e.sendOnce {
		return mach.MigTypeError
	}
	k.freeName(tok)
	tk.task.holds--
	return mach.KernSuccess
}

// TaskInfo answers TASK_DYLD_INFO as osfmk/kern/task.c task_info does:
// KERN_INVALID_ARGUMENT for another task no longer active ("if (task !=
// current_task() && !task->active)"), else the address and size dyld
// registered (task->all_image_info_addr) and, with room for it, the 64-bit
// format.
func (k *Kernel) TaskInfo(task, flavor uint32, info []uint32) (uint32, mach.KernReturn) {
	k.enter(CallTaskInfo)
	defer k.mu.Unlock()
	t, kr := k.portTask(task)
	if kr != mach.KernSuccess {
		return 0, kr
	}
	if t.phase != phaseAlive && t != k.self {
		return 0, mach.KernInvalidArgument
	}
	if flavor != mach.TaskDyldInfo {
		return 0, mach.KernInvalidArgument
	}
	if len(info) < 4 { // TASK_LEGACY_DYLD_INFO_COUNT
		return 0, mach.KernInvalidArgument
	}
	put64(info[0:], t.dyldAddr)
	put64(info[2:], t.dyldSize)
	if len(info) >= mach.TaskDyldInfoCount {
		info[4] = mach.TaskDyldAllImageInfo64
		return mach.TaskDyldInfoCount, mach.KernSuccess
	}
	return 4, mach.KernSuccess
}

// ThreadSuspend follows osfmk/kern/thread_act.c thread_suspend: it raises
// the thread's user_stop_count, an unowned count that nothing lowers if
// the caller dies; KERN_TERMINATED for a thread no longer active.
func (k *Kernel) ThreadSuspend(thread uint32) mach.KernReturn {
	k.enter(CallThreadSuspend)
	defer k.mu.Unlock()
	th, kr := k.activeThread(thread)
	if kr != mach.KernSuccess {
		return kr
	}
	th.UserStop++
	return mach.KernSuccess
}

// ThreadResume follows osfmk/kern/thread_act.c thread_resume: KERN_FAILURE
// when the count is already zero, KERN_TERMINATED for a thread no longer
// active (its count is then never lowered).
func (k *Kernel) ThreadResume(thread uint32) mach.KernReturn {
	k.enter(CallThreadResume)
	defer k.mu.Unlock()
	th, kr := k.activeThread(thread)
	if kr != mach.KernSuccess {
		return kr
	}
	if th.UserStop == 0 {
		return mach.KernFailure
	}
	th.UserStop--
	return mach.KernSuccess
}

// ThreadGetState follows osfmk/kern/thread_act.c thread_get_state_internal
// (KERN_TERMINATED for a thread no longer active) and the machine layer:
// osfmk/arm64/status.c machine_thread_get_state answers an x86 flavor with
// KERN_INVALID_ARGUMENT ("default: return KERN_INVALID_ARGUMENT"), for a
// Rosetta thread too when the caller is native arm64, and serves
// ARM_THREAD_STATE64 for every 64-bit thread, a Rosetta thread included
// (only "if (!thread_is_64bit_data(thread))" refuses): the registers of
// the translated code Rosetta runs, not the x86_64 program's. A caller
// that is itself translated has its x86_THREAD_STATE64 served by Rosetta
// (whose source Apple does not publish: modelled as the x86_64 state),
// and an Intel kernel (osfmk/i386/pcb.c machine_thread_get_state) refuses
// arm64 flavors. The state is the thread's current frame: its registers as
// the stack it is on left them.
func (k *Kernel) ThreadGetState(thread, flavor uint32, state []uint32) (uint32, mach.KernReturn) {
	k.enter(CallThreadGetState)
	defer k.mu.Unlock()
	th, kr := k.activeThread(thread)
	if kr != mach.KernSuccess {
		return 0, kr
	}
	hostARM := k.GOARCHValue == "arm64" || k.ProfilerTranslated
	x86 := th.task.Translated || !hostARM
	switch flavor {
	case mach.ArmThreadState64:
		if !hostARM {
			return 0, mach.KernInvalidArgument
		}
		if len(state) < mach.ArmThreadState64Count {
			return 0, mach.KernInvalidArgument
		}
		if th.task.Translated {
			// Which arm64 registers hold which x86_64 ones inside
			// Rosetta is not published: the model gives the state of
			// its runtime, a PC outside every image of the program and
			// no frame chain, so that a backend that reads this flavor
			// of a translated thread names none of its frames.
			clear(state[:mach.ArmThreadState64Count])
			put64(state[62:], th.regs().SP)
			put64(state[64:], RosettaRuntimePC)
			return mach.ArmThreadState64Count, mach.KernSuccess
		}
		// osfmk/arm64/status.c machine_thread_get_state, case
		// ARM_THREAD_STATE64 (lines 1254-1266 at xnu-11417.101.15):
		// handle_get_arm64_thread_state (194-209) copies the user
		// saved state, thread->machine.upcb, with
		// saved_state_to_thread_state64 (97-113). The words are
		// struct __darwin_arm_thread_state64 (osfmk/mach/arm/_structs.h
		// 180-189): x0-x28 in words 0-57, then fp (x29) at 58, lr (x30)
		// at 60, sp at 62, pc at 64. The model keeps only these four
		// (its other registers read as zero): the interrupted
		// instruction's, as its stack left them.
		clear(state[:mach.ArmThreadState64Count])
		r := th.regs()
		put64(state[58:], r.FP)
		put64(state[60:], r.LR)
		put64(state[62:], r.SP)
		put64(state[64:], r.PC)
		return mach.ArmThreadState64Count, mach.KernSuccess
	case mach.X86ThreadState64:
		if !x86 || (hostARM && !k.ProfilerTranslated) {
			return 0, mach.KernInvalidArgument
		}
		if len(state) < mach.X86ThreadState64Count {
			return 0, mach.KernInvalidArgument
		}
		// osfmk/i386/pcb.c machine_thread_get_state, case
		// x86_THREAD_STATE64 (lines 1580-1594 at xnu-11417.101.15):
		// get_thread_state64 (804-850) copies the user saved state,
		// USER_REGS64(thread) (osfmk/i386/thread.h 166): rbp from
		// saved_state->rbp, rsp and rip from the interrupt frame
		// (isf.rsp, isf.rip). The words are struct
		// __darwin_x86_thread_state64 (osfmk/mach/i386/_structs.h
		// 714-738): rax, rbx, rcx, rdx, rdi, rsi in words 0-11, rbp
		// at 12, rsp at 14, r8-r15 in 16-31, rip at 32. The model
		// keeps only rbp, rsp and rip (its other registers read as
		// zero): the interrupted instruction's, as its stack left
		// them.
		clear(state[:mach.X86ThreadState64Count])
		r := th.regs()
		put64(state[12:], r.FP) // rbp
		put64(state[14:], r.SP) // rsp
		put64(state[32:], r.PC) // rip
		return mach.X86ThreadState64Count, mach.KernSuccess
	}
	return 0, mach.KernInvalidArgument
}

// ThreadInfo follows osfmk/kern/thread_act.c thread_info (KERN_TERMINATED
// unless active) and osfmk/kern/thread.c thread_info_internal for
// THREAD_BASIC_INFO, THREAD_IDENTIFIER_INFO and THREAD_EXTENDED_INFO.
func (k *Kernel) ThreadInfo(thread, flavor uint32, info []uint32) (uint32, mach.KernReturn) {
	k.enter(CallThreadInfo)
	defer k.mu.Unlock()
	th, kr := k.activeThread(thread)
	if kr != mach.KernSuccess {
		return 0, kr
	}
	cpu := th.cpu
	switch flavor {
	case mach.ThreadBasicInfo:
		if len(info) < mach.ThreadBasicInfoCount {
			return 0, mach.KernInvalidArgument
		}
		clear(info[:mach.ThreadBasicInfoCount])
		info[0] = uint32(cpu / time.Second)
		info[1] = uint32(cpu % time.Second / time.Microsecond)
		run := uint32(mach.THStateWaiting)
		if th.Busy && th.runnable() {
			run = mach.THStateRunning
		} else if !th.runnable() {
			run = mach.THStateStopped
		}
		info[6] = run
		info[8] = uint32(th.UserStop)
		return mach.ThreadBasicInfoCount, mach.KernSuccess
	case mach.ThreadIdentifierInfo:
		if len(info) < mach.ThreadIdentifierInfoCount {
			return 0, mach.KernInvalidArgument
		}
		clear(info[:mach.ThreadIdentifierInfoCount])
		put64(info[0:], th.ID)
		return mach.ThreadIdentifierInfoCount, mach.KernSuccess
	case mach.ThreadExtendedInfo:
		if len(info) < mach.ThreadExtendedInfoCount {
			return 0, mach.KernInvalidArgument
		}
		clear(info[:mach.ThreadExtendedInfoCount])
		put64(info[0:], uint64(cpu))
		var name [mach.MaxThreadNameSize]byte
		copy(name[:mach.MaxThreadNameSize-1], th.Name)
		for i := 0; i < mach.MaxThreadNameSize/4; i++ {
			info[12+i] = uint32(name[4*i]) | uint32(name[4*i+1])<<8 | uint32(name[4*i+2])<<16 | uint32(name[4*i+3])<<24
		}
		return mach.ThreadExtendedInfoCount, mach.KernSuccess
	}
	return 0, mach.KernInvalidArgument
}

// VMReadOverwrite follows osfmk/vm/vm_user.c mach_vm_read_overwrite
// (vm_map_copyin, then vm_map_copy_overwrite): all of the range must be
// mapped and readable, or nothing is copied (KERN_INVALID_ADDRESS for a
// hole, KERN_PROTECTION_FAILURE for memory without read permission).
func (k *Kernel) VMReadOverwrite(task uint32, addr uint64, dst []byte) (uint64, mach.KernReturn) {
	k.enter(CallVMReadOverwrite)
	defer k.mu.Unlock()
	t, kr := k.portTask(task)
	if kr != mach.KernSuccess {
		return 0, kr
	}
	if kr := t.read(addr, dst); kr != mach.KernSuccess {
		return 0, kr
	}
	n := uint64(len(dst))
	if limit := k.kernelBufferMax(); n > limit {
		// vm_map_copyin_internal (osfmk/vm/vm_map.c at xnu-11417.101.15,
		// 12117-12139) copies through a kernel buffer only "if the copy
		// is sufficiently small" (len <= msg_ool_size_small); a larger
		// read is a virtual copy: the entries holding the page-rounded
		// range (vm_map_copyin_sanitize) are clipped to it
		// (vm_map_clip_start 12198 and 12611, vm_map_clip_end 12330)
		// and marked needs_copy, their pages write-protected
		// (12386-12412), which vm_map_simplify_range cannot merge back.
		page := t.pageSize(k)
		lo, hi := addr&^(page-1), (addr+n+page-1)&^(page-1)
		t.clip(lo)
		t.clip(hi)
		k.virtualCopies = append(k.virtualCopies, fmt.Sprintf("task %d [%#x, %#x): %d bytes > %d", t.PID, addr, addr+n, n, limit))
	}
	k.counts.BytesRead += int64(n)
	k.counts.LargestRead = max(k.counts.LargestRead, int64(n))
	return n, mach.KernSuccess
}

// kernelBufferMax is msg_ool_size_small, which is KHEAP_MAX_SIZE
// (osfmk/ipc/ipc_init.c 136): 16 KiB on an x86_64 kernel, 32 KiB on the
// others (osfmk/kern/kalloc.h 377-383). The kernel's architecture is the
// host's: arm64 when the profiler is arm64 or translated by Rosetta.
func (k *Kernel) kernelBufferMax() uint64 {
	if k.GOARCHValue == "arm64" || k.ProfilerTranslated {
		return 32 << 10
	}
	return 16 << 10
}

// VirtualCopies describes each mach_vm_read_overwrite that made a virtual
// copy of a task's memory (see VMReadOverwrite); Check fails when there
// is one.
func (k *Kernel) VirtualCopies() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.virtualCopies)
}

// VMRegion follows osfmk/vm/vm_map.c vm_map_region for
// VM_REGION_BASIC_INFO_64: the entry holding addr, or the next one above
// it, KERN_INVALID_ADDRESS when there is none; object_name is always
// IP_NULL on current kernels.
func (k *Kernel) VMRegion(task uint32, addr uint64, info *mach.VMRegionBasicInfo64Data) (uint64, uint64, uint32, mach.KernReturn) {
	k.enter(CallVMRegion)
	defer k.mu.Unlock()
	t, kr := k.portTask(task)
	if kr != mach.KernSuccess {
		return 0, 0, 0, kr
	}
	for _, r := range t.mem {
		if r.addr+uint64(len(r.data)) > addr {
			*info = mach.VMRegionBasicInfo64Data{Protection: r.prot, MaxProtection: 7}
			return r.addr, uint64(len(r.data)), 0, mach.KernSuccess
		}
	}
	return 0, 0, 0, mach.KernInvalidAddress
}

// PortDeallocate follows osfmk/ipc/mach_port.c mach_port_deallocate and
// osfmk/ipc/ipc_right.c ipc_right_dealloc: KERN_INVALID_NAME for a name
// the space does not hold; a send right or dead name loses one user
// reference and the name is freed at zero; destroying a send-once right
// that is a suspension token resumes the task
// (osfmk/kern/task.c task_suspension_send_once).
func (k *Kernel) PortDeallocate(task, name uint32) mach.KernReturn {
	k.enter(CallPortDeallocate)
	defer k.mu.Unlock()
	if task != k.selfName {
		return mach.KernInvalidArgument
	}
	if name == 0 || name == ^uint32(0) {
		// MACH_PORT_NULL and MACH_PORT_DEAD name no right:
		// mach_port_deallocate_kernel returns KERN_SUCCESS for them
		// ("if (!MACH_PORT_VALID(name))").
		return mach.KernSuccess
	}
	return k.dealloc(name)
}

func (k *Kernel) dealloc(name uint32) mach.KernReturn {
	e := k.space[name]
	if e == nil {
		return mach.KernInvalidName
	}
	if name == k.selfName && e.urefs == 1 {
		return mach.KernSuccess // mach_task_self_ is pinned
	}
	e.urefs--
	if e.urefs > 0 {
		return mach.KernSuccess
	}
	if k.names[e.obj] == name {
		delete(k.names, e.obj)
	}
	k.freeName(name)
	if tk, ok := e.obj.(*token); ok {
		tk.task.holds--
	}
	return mach.KernSuccess
}

// VMDeallocate frees an array task_threads allocated; the size must be
// the array's (osfmk/vm/vm_user.c mach_vm_deallocate frees what is asked:
// a wrong size would leak or free too much, which the model refuses).
func (k *Kernel) VMDeallocate(task uint32, addr uintptr, size uint64) mach.KernReturn {
	k.enter(CallVMDeallocate)
	defer k.mu.Unlock()
	a, ok := k.arrays[addr]
	if !ok || task != k.selfName || size != uint64(len(a))*4 {
		return mach.KernInvalidAddress
	}
	delete(k.arrays, addr)
	return mach.KernSuccess
}

// ErrorString implements mach.Kernel with the constant's name.
func (k *Kernel) ErrorString(kr mach.KernReturn) string { return "(model) " + kr.String() }

// ProcPIDPath follows libsyscall wrappers/libproc/libproc.c proc_pidpath:
// the path's length, or 0 on any error.
func (k *Kernel) ProcPIDPath(pid int, buf []byte) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.tasks[pid]
	if t == nil || t.reaped || t.HidePath {
		return 0
	}
	return copy(buf, t.Path)
}

// SysctlUint32 answers sysctl.proc_translated (bsd/kern/kern_sysctl.c
// sysctl_translated: 1 for a process run by Rosetta) and
// machdep.virtual_address_size (absent on Intel).
func (k *Kernel) SysctlUint32(name string) (uint32, bool) {
	switch name {
	case "sysctl.proc_translated":
		if k.ProfilerTranslated {
			return 1, true
		}
		return 0, true
	case "machdep.virtual_address_size":
		return k.VABits, k.VABits != 0
	}
	return 0, false
}

// ProcFlags answers kern.proc.pid.PID's p_flag (bsd/sys/proc.h
// P_TRANSLATED for a Rosetta process); ESRCH when there is no process.
func (k *Kernel) ProcFlags(pid int) (int32, syscall.Errno) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.tasks[pid]
	if t == nil || t.reaped {
		return 0, syscall.ESRCH
	}
	if t.FlagsErr != 0 {
		return 0, t.FlagsErr
	}
	if t.Translated {
		return mach.PTranslated, 0
	}
	return 0, 0
}

// Spawn follows bsd/kern/kern_exec.c posix_spawn with
// POSIX_SPAWN_START_SUSPENDED: the new task is held
// (task_suspend_internal) and its dyld has not run: TASK_DYLD_INFO points
// at the on-disk dyld's dyld_all_image_infos (kern_exec.c
// task_set_dyld_info from the load result), whose infoArray is still NULL.
// The images of the task come from Launchable.
func (k *Kernel) Spawn(path string, argv, env []string, cred *mach.SpawnCred) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if cred != nil && k.EUID != 0 {
		// kern_exec.c posix_spawn: "if (!kauth_cred_issuser(kauth_cred_get()))
		// { error = EPERM; goto bad; }" for posix_cred_info.
		return 0, syscall.EPERM
	}
	if cred != nil && (len(cred.Groups) == 0 || len(cred.Groups) > 16) {
		// posix_spawnattr_set_groups_np: EINVAL for more than NGROUPS
		// (libsyscall wrappers/spawn/posix_spawn.c).
		return 0, syscall.EINVAL
	}
	l := k.launchable[path]
	if l == nil {
		return 0, syscall.ENOENT
	}
	t := l(k)
	t.Env = slices.Clone(env)
	// spawn_posix_cred_adopt (kern_exec.c) runs setgid, setgroups and
	// setuid on the child before its exec; without cred the child keeps
	// the caller's credentials.
	t.Cred = mach.SpawnCred{UID: k.EUID, GID: k.EGID, GMUID: k.EUID, Groups: []int{k.EGID}}
	if cred != nil {
		t.Cred = *cred
		t.Cred.Groups = slices.Clone(cred.Groups)
	}
	t.stopped = true
	t.holds++
	return t.PID, nil
}

// Geteuid implements mach.Kernel.
func (k *Kernel) Geteuid() int { return k.EUID }

// Getenv implements mach.Kernel from Env.
func (k *Kernel) Getenv(key string) string { return k.Env[key] }

// LookupUser implements mach.Kernel from Users.
func (k *Kernel) LookupUser(uid int) (mach.UserInfo, error) {
	u, ok := k.Users[uid]
	if !ok {
		return mach.UserInfo{}, fmt.Errorf("user: unknown userid %d", uid)
	}
	u.Groups = slices.Clone(u.Groups)
	return u, nil
}

// Kill follows bsd/kern/kern_sig.c kill: ESRCH for no process (a zombie
// still counts until reaped), signal 0 only checks; SIGCONT releases the
// hold of a stopped task (kern_sig.c psignal_internal: task_resume_internal
// when it was SSTOP), and SIGKILL ends it.
func (k *Kernel) Kill(pid int, sig syscall.Signal) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.tasks[pid]
	if t == nil || t.reaped {
		return syscall.ESRCH
	}
	switch sig {
	case 0:
	case syscall.SIGCONT:
		if t.stopped {
			t.stopped = false
			t.holds--
			t.continued(k.step)
		}
	case syscall.SIGKILL:
		t.exit(syscall.WaitStatus(uint32(syscall.SIGKILL)))
	case syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM:
		// Their default action ends the process (kern_sig.c sigprop:
		// SA_KILL); the modelled programs install no handler.
		if !t.stopped {
			t.exit(syscall.WaitStatus(uint32(sig)))
		}
	}
	return nil
}

// Wait4 waits for the task to exit and reaps it (bsd/kern/kern_exit.c
// wait4: ECHILD for a process that is not a child or already reaped).
func (k *Kernel) Wait4(pid int) (syscall.WaitStatus, error) {
	k.mu.Lock()
	t := k.tasks[pid]
	if t == nil || t.reaped || !t.child {
		k.mu.Unlock()
		return 0, syscall.ECHILD
	}
	k.mu.Unlock()
	<-t.exited
	k.mu.Lock()
	defer k.mu.Unlock()
	// The process's task of the moment: an exec (Exec) gave it another.
	t = k.tasks[pid]
	t.reaped = true
	return t.status, nil
}

// Die models the profiler's death: the kernel destroys its port space
// (osfmk/ipc/ipc_space.c ipc_space_terminate), so every suspension token
// it held is released (osfmk/kern/task.c task_suspension_no_senders /
// task_suspension_send_once), while the user_stop_count its
// thread_suspend calls raised stays (thread_act.c: nothing owns it).
func (k *Kernel) Die() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.die()
}

func (k *Kernel) die() {
	k.dead = true
	for name, e := range k.space {
		if tk, ok := e.obj.(*token); ok {
			tk.task.holds--
		}
		if name != k.selfName {
			k.freeName(name)
		}
	}
	clear(k.names)
	k.names[portObj{task: k.self}] = k.selfName
	clear(k.arrays)
}

// ClearUserStops sets every thread's user_stop_count back to zero, for a
// test that shows a count left behind (something only a reboot or the
// thread's exit does on a Mac).
func (k *Kernel) ClearUserStops() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, t := range k.tasks {
		for _, th := range t.Threads {
			th.UserStop = 0
		}
	}
}

// Rights returns the names of the rights the profiler holds (its own task
// port aside), with their user references, sorted.
func (k *Kernel) Rights() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for n, e := range k.space {
		if n == k.selfName {
			continue
		}
		out = append(out, fmt.Sprintf("%#x:%s×%d", n, describe(e), e.urefs))
	}
	sort.Strings(out)
	return out
}

func describe(e *entry) string {
	s := ""
	switch o := e.obj.(type) {
	case portObj:
		s = fmt.Sprintf("task(%d)", o.task.PID)
		if o.read {
			s = fmt.Sprintf("task_read(%d)", o.task.PID)
		}
	case *Thread:
		s = fmt.Sprintf("thread(%d/%d)", o.task.PID, o.ID)
	case *token:
		s = fmt.Sprintf("suspension-token(%d)", o.task.PID)
	}
	if e.dead {
		s += "(dead)"
	}
	return s
}

// Check asserts what the profiler must leave behind: no port right but
// its own task port (dead names included), no task_threads array, no
// thread with a user_stop_count above zero, no task held by a suspension
// token, and no read that made a virtual copy of a task's memory.
func (k *Kernel) Check(t testing.TB) {
	t.Helper()
	if r := k.Rights(); len(r) > 0 {
		t.Errorf("machtest: the profiler leaked %d port rights: %v", len(r), r)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.arrays) > 0 {
		t.Errorf("machtest: %d task_threads arrays were not vm_deallocated", len(k.arrays))
	}
	if len(k.virtualCopies) > 0 {
		t.Errorf("machtest: %d mach_vm_read_overwrite calls read more than the kernel buffers (msg_ool_size_small) "+
			"and made the target's memory copy-on-write: %v", len(k.virtualCopies), k.virtualCopies)
	}
	for _, tk := range k.tasksSorted() {
		if h := tk.holds; h != 0 && !(tk.stopped && h == 1) && tk.phase == phaseAlive {
			t.Errorf("machtest: task %d left with %d suspension holds", tk.PID, h)
		}
		for _, th := range tk.Threads {
			// A thread that is gone holds nothing: its count went
			// with it (thread_act.c thread_terminate_internal).
			if th.UserStop != 0 && th.phase == phaseAlive {
				t.Errorf("machtest: thread %d of task %d left suspended (user_stop_count %d)", th.ID, tk.PID, th.UserStop)
			}
		}
	}
}

func (k *Kernel) tasksSorted() []*Task {
	var ts []*Task
	for _, t := range k.tasks {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *Task) int { return a.PID - b.PID })
	return ts
}

func put64(w []uint32, v uint64) {
	w[0], w[1] = uint32(v), uint32(v>>32)
}

var _ mach.Kernel = (*Kernel)(nil)
