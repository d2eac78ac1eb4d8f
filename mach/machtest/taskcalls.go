package machtest

import (
	"syscall"

	"github.com/macprof/macprof/mach"
)

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
