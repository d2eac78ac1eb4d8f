package mach

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/macprof/macprof/target"
)

// taskMemory reads a task's memory. It outlives the Target's Close so that
// images whose symbols live in the target's memory can still be read at
// export time; the task port is released by Release or, failing that, when
// the last reference is gone.
type taskMemory struct {
	k        Kernel
	mu       sync.RWMutex
	task     uint32
	own      bool // the port is ours to release (not mach_task_self)
	released bool
	cleanup  runtime.Cleanup
}

// errUnreadable is returned by the walker's fallback reader; a constant so
// that a failing read does not allocate.
var errUnreadable = errors.New("mach_vm_read_overwrite failed")

func (m *taskMemory) ReadMemory(addr uint64, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.released {
		return target.ErrClosed
	}
	out, k := m.k.VMReadOverwrite(m.task, addr, dst)
	if k != KernSuccess {
		return &Error{Op: fmt.Sprintf("mach_vm_read_overwrite(%#x, %d)", addr, len(dst)), Code: k, Desc: m.k.ErrorString(k)}
	}
	if out != uint64(len(dst)) {
		return fmt.Errorf("mach_vm_read_overwrite(%#x, %d): short read of %d bytes", addr, len(dst), out)
	}
	return nil
}

func (m *taskMemory) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		return
	}
	m.released = true
	if m.own {
		m.cleanup.Stop()
		m.k.PortDeallocate(m.k.TaskSelf(), m.task)
	}
}

// walkReader is the walker's fallback: single reads outside the bulk copy,
// without allocating on failure. The Target holds its taskMemory's read
// lock for the whole capture.
type walkReader struct{ m *taskMemory }

func (w walkReader) ReadMemory(addr uint64, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	if out, k := w.m.k.VMReadOverwrite(w.m.task, addr, dst); k != KernSuccess || out != uint64(len(dst)) {
		return errUnreadable
	}
	return nil
}
