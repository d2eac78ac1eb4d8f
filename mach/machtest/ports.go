package machtest

import (
	"syscall"

	"github.com/macprof/macprof/mach"
)

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
