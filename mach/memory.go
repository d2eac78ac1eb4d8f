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
	chunk    uint64 // the largest single read: KernelBufferMax
	own      bool   // the port is ours to release (not mach_task_self)
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
	out, k := m.read(addr, dst)
	if k != KernSuccess {
		return &Error{Op: fmt.Sprintf("mach_vm_read_overwrite(%#x, %d)", addr+out, min(uint64(len(dst))-out, m.chunk)), Code: k, Desc: m.k.ErrorString(k)}
	}
	return nil
}

// read copies len(dst) bytes at addr in reads of at most m.chunk bytes,
// so that the kernel copies each through a buffer and never makes the
// target's memory copy-on-write (see KernelBufferMax). It returns the
// bytes copied before the first read that failed, and that read's code
// (KERN_FAILURE for a short one).
func (m *taskMemory) read(addr uint64, dst []byte) (uint64, KernReturn) {
	chunk := m.chunk
	if chunk == 0 {
		chunk = KernelBufferMax(false)
	}
	var done uint64
	for done < uint64(len(dst)) {
		n := min(uint64(len(dst))-done, chunk)
		out, k := m.k.VMReadOverwrite(m.task, addr+done, dst[done:done+n])
		if k == KernSuccess && out != n {
			k = KernFailure
		}
		if k != KernSuccess {
			return done, k
		}
		done += n
	}
	return done, KernSuccess
}

// KernelBufferMax is the largest mach_vm_read_overwrite xnu copies through
// a kernel buffer: vm_map_copyin_internal (osfmk/vm/vm_map.c) copies a
// range of at most msg_ool_size_small bytes with
// vm_map_copyin_kernel_buffer, and makes a larger one a virtual copy: it
// clips the target's map entries to the range (vm_map_clip_start,
// vm_map_clip_end) and write-protects them for copy-on-write, which costs
// the target faults and splits its regions. msg_ool_size_small is
// KHEAP_MAX_SIZE (osfmk/ipc/ipc_init.c), 16 KiB on an x86_64 kernel and
// 32 KiB on the others (osfmk/kern/kalloc.h): the kernel's architecture
// decides, so a Rosetta target on Apple silicon gets 32 KiB.
func KernelBufferMax(hostARM64 bool) uint64 {
	if hostARM64 {
		return 32 << 10
	}
	return 16 << 10
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
	if _, k := w.m.read(addr, dst); k != KernSuccess {
		return errUnreadable
	}
	return nil
}
