package mach

import (
	"runtime"
)

// reattach follows an exec. xnu gives an exec'ing process a new task and
// terminates the old one (bsd/kern/kern_exec.c: cloneproc(...,
// CLONEPROC_EXEC), proc_exec_switch_task, task_terminate_internal(old)),
// so the task port a Target holds dies while its PID lives on: reattach
// opens the PID's task again and, when it is another task, the Target goes
// on with it, its threads and images read afresh. The old task's images
// keep the old task's memory, which fails every read from now on (their
// symbols were read while it lived, or come from their files). It reports
// whether the Target now holds a new task. The caller holds t.calls.
//
// A launched command reaped already is not followed (its PID may be
// another process's); an attached process that exited and whose PID was
// reused at once would be, which takes a wrap of the PID space between two
// ticks.
func (t *Target) reattach() bool {
	if t.self || t.closed || !t.mem.own {
		return false
	}
	if t.launched {
		select {
		case <-t.waitDone:
			return false
		default:
		}
	}
	task, err := openTask(t.k, t.pid)
	if err != nil {
		return false
	}
	self := t.k.TaskSelf()
	if task == t.mem.task {
		// The same task (every right to a task shares its name): it
		// lives, or the PID has no task but the one we hold.
		t.k.PortDeallocate(self, task)
		return false
	}
	translated, err := processTranslated(t.k, t.pid)
	if err != nil {
		t.k.PortDeallocate(self, task)
		return false
	}
	for id, th := range t.threads {
		t.k.PortDeallocate(self, th.port)
		delete(t.threads, id)
		delete(t.byPort, th.port)
	}
	t.mem.release()
	t.mem = &taskMemory{k: t.k, task: task, own: true, chunk: t.mem.chunk}
	t.mem.cleanup = runtime.AddCleanup(t.mem, func(port uint32) { t.k.PortDeallocate(self, port) }, task)
	if err := t.setWalkers(translated); err != nil {
		return false
	}
	t.imgSet, t.imgKey, t.compact = nil, imgKey{}, nil
	t.hits.set, t.hits.unknown = nil, true
	t.path, _ = processPath(t.k, t.pid)
	t.execs++
	return true
}
