package mach

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/macprof/macprof/target"
)

// maxThreads bounds the threads taken from one listing, so that a task
// reporting a huge list cannot make macprof hold a port for each.
const maxThreads = 1 << 16

// nameRefresh is how often a thread's name is read again.
const nameRefresh = time.Second

// thread is a thread the Target holds a port for. seen is the number of the
// last listing that showed it, so that ports of exited threads are released.
type thread struct {
	port    uint32
	id      target.ThreadID
	seen    uint64
	name    string
	nameAt  time.Time
	stackLo uint64 // the region that held SP last time (0, 0: unknown)
	stackHi uint64
}

// Threads lists the target's threads (their THREAD_IDENTIFIER_INFO ids) in
// the order task_threads gives. Every port and the array task_threads
// returns are released; the Target keeps one reference per live thread.
//
// When the task died while the process lives on (an exec gave it a new
// task), the Target follows the process to its new task.
func (t *Target) Threads(dst []target.ThreadID) ([]target.ThreadID, error) {
	t.calls.Lock()
	defer t.calls.Unlock()
	ids, err := t.listThreads(dst)
	if errors.Is(err, target.ErrExited) && t.reattach() {
		return t.listThreads(dst)
	}
	return ids, err
}

// listThreads is Threads with t.calls held.
func (t *Target) listThreads(dst []target.ThreadID) ([]target.ThreadID, error) {
	dst = dst[:0]
	if t.closed {
		return dst, target.ErrClosed
	}
	t.mem.mu.RLock()
	defer t.mem.mu.RUnlock()
	list, ports, k := t.k.TaskThreads(t.mem.task)
	if k != KernSuccess {
		e := ThreadError("task_threads", k, t.errorString(k), t.taskAlive())
		return dst, e
	}
	self := t.k.TaskSelf()
	t.gen++
	var cur uint32
	if t.self {
		cur = t.k.ThreadSelf()
	}
	for i, p := range ports {
		if !portValid(p) {
			// A thread whose port the kernel disabled as it exits
			// (MACH_PORT_NULL): no right was given, nothing to release.
			continue
		}
		if th := t.byPort[p]; th != nil {
			// We already hold a reference to this thread: drop the new one.
			t.k.PortDeallocate(self, p)
			th.seen = t.gen
		} else if i < maxThreads {
			if _, k := t.k.ThreadInfo(p, ThreadIdentifierInfo, words(&t.ident, ThreadIdentifierInfoCount)); k != KernSuccess {
				t.k.PortDeallocate(self, p) // it exited meanwhile
				continue
			}
			th := &thread{port: p, id: target.ThreadID(t.ident.ThreadID), seen: t.gen}
			if old := t.threads[th.id]; old != nil {
				// Same id under a new port name: keep the newest.
				delete(t.byPort, old.port)
				t.k.PortDeallocate(self, old.port)
			}
			t.threads[th.id] = th
			t.byPort[p] = th
		} else {
			t.k.PortDeallocate(self, p)
			continue
		}
		if t.self && p == cur {
			continue // never list the thread that samples
		}
		dst = append(dst, t.byPort[p].id)
	}
	if t.self {
		t.k.PortDeallocate(self, cur)
	}
	if len(ports) > 0 {
		t.k.VMDeallocate(self, list, uint64(len(ports))*4)
	}
	for id, th := range t.threads {
		if th.seen != t.gen {
			delete(t.threads, id)
			delete(t.byPort, th.port)
			t.k.PortDeallocate(self, th.port)
		}
	}
	return dst, nil
}

// portValid is MACH_PORT_VALID: task_threads lists a thread whose port
// is disabled as MACH_PORT_NULL (xnu osfmk/kern/ipc_tt.c
// convert_thread_to_port_with_flavor: IP_NULL unless thread->ipc_active)
// and one a security policy hides as MACH_PORT_DEAD (IP_DEAD).
func portValid(name uint32) bool { return name != 0 && name != ^uint32(0) }

// lookup returns the listed thread id, or an error wrapping ErrClosed or
// ErrNoThread. t.calls is held.
func (t *Target) lookup(id target.ThreadID) (*thread, error) {
	if t.closed {
		return nil, target.ErrClosed
	}
	th := t.threads[id]
	if th == nil {
		return nil, fmt.Errorf("thread %d: %w", id, target.ErrNoThread)
	}
	return th, nil
}

// Info returns the thread's CPU time and run state (THREAD_BASIC_INFO) and
// its name (THREAD_EXTENDED_INFO pth_name, read at most once a second).
func (t *Target) Info(id target.ThreadID) (target.ThreadInfo, error) {
	t.calls.Lock()
	defer t.calls.Unlock()
	th, err := t.lookup(id)
	if err != nil {
		return target.ThreadInfo{}, err
	}
	t.mem.mu.RLock()
	defer t.mem.mu.RUnlock()
	if _, k := t.k.ThreadInfo(th.port, ThreadBasicInfo, words(&t.basic, ThreadBasicInfoCount)); k != KernSuccess {
		return target.ThreadInfo{}, ThreadError("thread_info(THREAD_BASIC_INFO)", k, t.errorString(k), t.taskAlive())
	}
	now := time.Now()
	if th.nameAt.IsZero() || now.Sub(th.nameAt) >= nameRefresh {
		th.nameAt = now
		if _, k := t.k.ThreadInfo(th.port, ThreadExtendedInfo, words(&t.ext, ThreadExtendedInfoCount)); k == KernSuccess {
			if b := t.ext.NameBytes(); string(b) != th.name {
				th.name = string(b)
			}
		}
	}
	return target.ThreadInfo{ID: id, Name: th.name, CPUTime: t.basic.CPUTime(), Running: t.basic.Running()}, nil
}

// words views a C struct the kernel fills as its first n 32-bit words.
func words[T any](p *T, n int) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(p)), n)
}
