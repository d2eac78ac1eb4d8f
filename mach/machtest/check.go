package machtest

import (
	"fmt"
	"slices"
	"sort"
	"testing"
)

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
