package machtest

import (
	"fmt"
	"slices"

	"github.com/macprof/macprof/mach"
)

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
