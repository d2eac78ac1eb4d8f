//go:build darwin

package mach

import (
	"syscall"
	"unsafe"
)

// Bindings to libSystem without cgo, as golang.org/x/sys/unix does it: each
// function is imported with cgo_import_dynamic, reached through a one-line
// assembly trampoline (zsyscall_darwin_{arm64,amd64}.s) whose address is
// libc_X_trampoline_addr, and called through the runtime's syscall or
// rawSyscall. Mach calls return a kern_return_t in r1; errno means nothing
// for them and is ignored. No policy lives here.

// Implemented in the runtime (runtime/sys_darwin.go, syscall/syscall_darwin.go).
func syscall_syscall(fn, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno)
func syscall_syscall6(fn, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err syscall.Errno)
func syscall_syscall9(fn, a1, a2, a3, a4, a5, a6, a7, a8, a9 uintptr) (r1, r2 uintptr, err syscall.Errno)
func syscall_rawSyscall(fn, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno)
func syscall_rawSyscall6(fn, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err syscall.Errno)

//go:linkname syscall_syscall syscall.syscall
//go:linkname syscall_syscall6 syscall.syscall6
//go:linkname syscall_syscall9 syscall.syscall9
//go:linkname syscall_rawSyscall syscall.rawSyscall
//go:linkname syscall_rawSyscall6 syscall.rawSyscall6

var (
	libc_task_for_pid_trampoline_addr                  uintptr
	libc_task_read_for_pid_trampoline_addr             uintptr
	libc_mach_task_self_trampoline_addr                uintptr
	libc_mach_thread_self_trampoline_addr              uintptr
	libc_task_threads_trampoline_addr                  uintptr
	libc_task_suspend2_trampoline_addr                 uintptr
	libc_task_resume2_trampoline_addr                  uintptr
	libc_thread_suspend_trampoline_addr                uintptr
	libc_thread_resume_trampoline_addr                 uintptr
	libc_thread_get_state_trampoline_addr              uintptr
	libc_thread_info_trampoline_addr                   uintptr
	libc_mach_vm_read_overwrite_trampoline_addr        uintptr
	libc_mach_vm_region_trampoline_addr                uintptr
	libc_task_info_trampoline_addr                     uintptr
	libc_mach_port_deallocate_trampoline_addr          uintptr
	libc_vm_deallocate_trampoline_addr                 uintptr
	libc_mach_error_string_trampoline_addr             uintptr
	libc_proc_pidpath_trampoline_addr                  uintptr
	libc_sysctlbyname_trampoline_addr                  uintptr
	libc_posix_spawn_trampoline_addr                   uintptr
	libc_posix_spawnattr_init_trampoline_addr          uintptr
	libc_posix_spawnattr_setflags_trampoline_addr      uintptr
	libc_posix_spawnattr_destroy_trampoline_addr       uintptr
	libc_mach_port_names_trampoline_addr               uintptr
	libc_posix_spawnattr_set_uid_np_trampoline_addr    uintptr
	libc_posix_spawnattr_set_gid_np_trampoline_addr    uintptr
	libc_posix_spawnattr_set_groups_np_trampoline_addr uintptr
)

//go:cgo_import_dynamic libc_task_for_pid task_for_pid "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_task_read_for_pid task_read_for_pid "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_mach_task_self mach_task_self "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_mach_thread_self mach_thread_self "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_task_threads task_threads "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_task_suspend2 task_suspend2 "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_task_resume2 task_resume2 "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_thread_suspend thread_suspend "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_thread_resume thread_resume "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_thread_get_state thread_get_state "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_thread_info thread_info "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_mach_vm_read_overwrite mach_vm_read_overwrite "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_mach_vm_region mach_vm_region "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_task_info task_info "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_mach_port_deallocate mach_port_deallocate "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_vm_deallocate vm_deallocate "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_mach_error_string mach_error_string "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_proc_pidpath proc_pidpath "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_sysctlbyname sysctlbyname "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_posix_spawn posix_spawn "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_posix_spawnattr_init posix_spawnattr_init "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_posix_spawnattr_setflags posix_spawnattr_setflags "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_posix_spawnattr_destroy posix_spawnattr_destroy "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_mach_port_names mach_port_names "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_posix_spawnattr_set_uid_np posix_spawnattr_set_uid_np "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_posix_spawnattr_set_gid_np posix_spawnattr_set_gid_np "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_posix_spawnattr_set_groups_np posix_spawnattr_set_groups_np "/usr/lib/libSystem.B.dylib"

func kr(r uintptr) KernReturn { return KernReturn(int32(uint32(r))) }

// --- task ports ---

func taskForPID(self uint32, pid int, task *uint32) KernReturn {
	r, _, _ := syscall_syscall(libc_task_for_pid_trampoline_addr, uintptr(self), uintptr(pid), uintptr(unsafe.Pointer(task)))
	return kr(r)
}

// taskReadForPID is a BSD system call (bsd/kern/syscalls.master 539),
// not a Mach trap: it returns 0, or -1 with errno.
func taskReadForPID(self uint32, pid int, task *uint32) (int32, syscall.Errno) {
	r, _, e := syscall_syscall(libc_task_read_for_pid_trampoline_addr, uintptr(self), uintptr(pid), uintptr(unsafe.Pointer(task)))
	if int32(r) == -1 {
		return -1, e
	}
	return int32(r), 0
}

// machTaskSelf calls the function mach_task_self(). In C, mach_task_self()
// is a macro that reads the global mach_task_self_; the function of the
// same name in libSystem returns the same port name. Callers cache it.
func machTaskSelf() uint32 {
	r, _, _ := syscall_rawSyscall(libc_mach_task_self_trampoline_addr, 0, 0, 0)
	return uint32(r)
}

// machThreadSelf returns a send right to the calling thread (a new user
// reference: release it with mach_port_deallocate).
func machThreadSelf() uint32 {
	r, _, _ := syscall_rawSyscall(libc_mach_thread_self_trampoline_addr, 0, 0, 0)
	return uint32(r)
}

// taskThreads returns the array of thread ports, allocated in our address
// space: release each port and then the array (vm_deallocate).
func taskThreads(task uint32, list *unsafe.Pointer, count *uint32) KernReturn {
	r, _, _ := syscall_syscall(libc_task_threads_trampoline_addr, uintptr(task), uintptr(unsafe.Pointer(list)), uintptr(unsafe.Pointer(count)))
	return kr(r)
}

func taskSuspend2(task uint32, token *uint32) KernReturn {
	r, _, _ := syscall_syscall(libc_task_suspend2_trampoline_addr, uintptr(task), uintptr(unsafe.Pointer(token)), 0)
	return kr(r)
}

func taskResume2(token uint32) KernReturn {
	r, _, _ := syscall_syscall(libc_task_resume2_trampoline_addr, uintptr(token), 0, 0)
	return kr(r)
}

func taskInfo(task uint32, flavor uint32, info unsafe.Pointer, count *uint32) KernReturn {
	r, _, _ := syscall_syscall6(libc_task_info_trampoline_addr, uintptr(task), uintptr(flavor), uintptr(info), uintptr(unsafe.Pointer(count)), 0, 0)
	return kr(r)
}

// --- threads ---

func threadSuspend(thread uint32) KernReturn {
	r, _, _ := syscall_syscall(libc_thread_suspend_trampoline_addr, uintptr(thread), 0, 0)
	return kr(r)
}

func threadResume(thread uint32) KernReturn {
	r, _, _ := syscall_syscall(libc_thread_resume_trampoline_addr, uintptr(thread), 0, 0)
	return kr(r)
}

func threadGetState(thread, flavor uint32, state unsafe.Pointer, count *uint32) KernReturn {
	r, _, _ := syscall_syscall6(libc_thread_get_state_trampoline_addr, uintptr(thread), uintptr(flavor), uintptr(state), uintptr(unsafe.Pointer(count)), 0, 0)
	return kr(r)
}

func threadInfo(thread, flavor uint32, info unsafe.Pointer, count *uint32) KernReturn {
	r, _, _ := syscall_syscall6(libc_thread_info_trampoline_addr, uintptr(thread), uintptr(flavor), uintptr(info), uintptr(unsafe.Pointer(count)), 0, 0)
	return kr(r)
}

// --- memory ---

func machVMReadOverwrite(task uint32, addr, size uint64, data unsafe.Pointer, outSize *uint64) KernReturn {
	r, _, _ := syscall_syscall6(libc_mach_vm_read_overwrite_trampoline_addr, uintptr(task), uintptr(addr), uintptr(size), uintptr(data), uintptr(unsafe.Pointer(outSize)), 0)
	return kr(r)
}

// machVMRegion finds the first region at or above *addr. objectName
// receives a port (MACH_PORT_NULL on current kernels) that must be
// released when it is not null.
func machVMRegion(task uint32, addr, size *uint64, flavor uint32, info unsafe.Pointer, count *uint32, objectName *uint32) KernReturn {
	r, _, _ := syscall_syscall9(libc_mach_vm_region_trampoline_addr, uintptr(task), uintptr(unsafe.Pointer(addr)), uintptr(unsafe.Pointer(size)), uintptr(flavor), uintptr(info), uintptr(unsafe.Pointer(count)), uintptr(unsafe.Pointer(objectName)), 0, 0)
	return kr(r)
}

func machPortDeallocate(task, name uint32) KernReturn {
	r, _, _ := syscall_syscall(libc_mach_port_deallocate_trampoline_addr, uintptr(task), uintptr(name), 0)
	return kr(r)
}

func vmDeallocate(task uint32, addr uintptr, size uint64) KernReturn {
	r, _, _ := syscall_syscall(libc_vm_deallocate_trampoline_addr, uintptr(task), addr, uintptr(size))
	return kr(r)
}

// --- the nosplit, scheduler-free variants used by Self between
// thread_suspend and thread_resume (see self_darwin.go) ---

//go:nosplit
//go:norace
func rawThreadSuspend(thread uint32) KernReturn {
	r, _, _ := syscall_rawSyscall(libc_thread_suspend_trampoline_addr, uintptr(thread), 0, 0)
	return KernReturn(int32(uint32(r)))
}

//go:nosplit
//go:norace
func rawThreadResume(thread uint32) KernReturn {
	r, _, _ := syscall_rawSyscall(libc_thread_resume_trampoline_addr, uintptr(thread), 0, 0)
	return KernReturn(int32(uint32(r)))
}

//go:nosplit
//go:norace
func rawThreadGetState(thread, flavor uint32, state unsafe.Pointer, count *uint32) KernReturn {
	r, _, _ := syscall_rawSyscall6(libc_thread_get_state_trampoline_addr, uintptr(thread), uintptr(flavor), uintptr(state), uintptr(unsafe.Pointer(count)), 0, 0)
	return KernReturn(int32(uint32(r)))
}

//go:nosplit
//go:norace
func rawMachVMReadOverwrite(task uint32, addr, size uint64, data unsafe.Pointer, outSize *uint64) KernReturn {
	r, _, _ := syscall_rawSyscall6(libc_mach_vm_read_overwrite_trampoline_addr, uintptr(task), uintptr(addr), uintptr(size), uintptr(data), uintptr(unsafe.Pointer(outSize)), 0)
	return KernReturn(int32(uint32(r)))
}

// --- libc ---

// machErrorString returns mach_error_string(k): a pointer to a static C
// string, copied here.
func machErrorString(k KernReturn) string {
	r, _, _ := syscall_syscall(libc_mach_error_string_trampoline_addr, uintptr(uint32(k)), 0, 0)
	if r == 0 {
		return ""
	}
	// r points to a static, NUL-terminated string in libSystem. Convert it
	// without a uintptr-to-pointer conversion (which vet rightly flags),
	// and read no further than its NUL.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&r))
	return string(CString(unsafe.Slice((*byte)(p), 512)))
}

// procPIDPath returns the path's length, or 0 on error (libsyscall
// wrappers/libproc/libproc.c proc_pidpath): not -1, so the runtime does
// not fetch errno, and none is returned.
func procPIDPath(pid int, buf []byte) int {
	r, _, _ := syscall_syscall(libc_proc_pidpath_trampoline_addr, uintptr(pid), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if int32(r) <= 0 {
		return 0
	}
	return int(int32(r))
}

func sysctlByName(name *byte, old unsafe.Pointer, oldLen *uintptr, newp unsafe.Pointer, newLen uintptr) syscall.Errno {
	r, _, e := syscall_syscall6(libc_sysctlbyname_trampoline_addr, uintptr(unsafe.Pointer(name)), uintptr(old), uintptr(unsafe.Pointer(oldLen)), uintptr(newp), newLen, 0)
	if int32(r) != 0 {
		return e
	}
	return 0
}

// posix_spawn returns an errno value (not -1 and errno).
func posixSpawn(pid *int32, path *byte, fileActions unsafe.Pointer, attr *unsafe.Pointer, argv, envp **byte) syscall.Errno {
	r, _, _ := syscall_syscall6(libc_posix_spawn_trampoline_addr, uintptr(unsafe.Pointer(pid)), uintptr(unsafe.Pointer(path)), uintptr(fileActions), uintptr(unsafe.Pointer(attr)), uintptr(unsafe.Pointer(argv)), uintptr(unsafe.Pointer(envp)))
	return syscall.Errno(int32(r))
}

func posixSpawnattrInit(attr *unsafe.Pointer) syscall.Errno {
	r, _, _ := syscall_syscall(libc_posix_spawnattr_init_trampoline_addr, uintptr(unsafe.Pointer(attr)), 0, 0)
	return syscall.Errno(int32(r))
}

func posixSpawnattrSetflags(attr *unsafe.Pointer, flags int16) syscall.Errno {
	r, _, _ := syscall_syscall(libc_posix_spawnattr_setflags_trampoline_addr, uintptr(unsafe.Pointer(attr)), uintptr(uint16(flags)), 0)
	return syscall.Errno(int32(r))
}

func posixSpawnattrDestroy(attr *unsafe.Pointer) syscall.Errno {
	r, _, _ := syscall_syscall(libc_posix_spawnattr_destroy_trampoline_addr, uintptr(unsafe.Pointer(attr)), 0, 0)
	return syscall.Errno(int32(r))
}

// posix_spawnattr_set_uid_np, _set_gid_np and _set_groups_np (libsyscall
// wrappers/spawn/posix_spawn.c, declared in spawn_private.h, exported by
// libsystem_kernel) record the credentials the child takes before its
// exec; they return an errno value.
func posixSpawnattrSetUIDNP(attr *unsafe.Pointer, uid uint32) syscall.Errno {
	r, _, _ := syscall_syscall(libc_posix_spawnattr_set_uid_np_trampoline_addr, uintptr(unsafe.Pointer(attr)), uintptr(uid), 0)
	return syscall.Errno(int32(r))
}

func posixSpawnattrSetGIDNP(attr *unsafe.Pointer, gid uint32) syscall.Errno {
	r, _, _ := syscall_syscall(libc_posix_spawnattr_set_gid_np_trampoline_addr, uintptr(unsafe.Pointer(attr)), uintptr(gid), 0)
	return syscall.Errno(int32(r))
}

func posixSpawnattrSetGroupsNP(attr *unsafe.Pointer, ngroups int32, groups *uint32, gmuid uint32) syscall.Errno {
	r, _, _ := syscall_syscall6(libc_posix_spawnattr_set_groups_np_trampoline_addr, uintptr(unsafe.Pointer(attr)), uintptr(ngroups), uintptr(unsafe.Pointer(groups)), uintptr(gmuid), 0, 0)
	return syscall.Errno(int32(r))
}

// machPortNames lists the port names of task (used by the tests to count
// ports). Both arrays are allocated in our address space: release them.
func machPortNames(task uint32, names *unsafe.Pointer, namesCount *uint32, types *unsafe.Pointer, typesCount *uint32) KernReturn {
	r, _, _ := syscall_syscall6(libc_mach_port_names_trampoline_addr, uintptr(task), uintptr(unsafe.Pointer(names)), uintptr(unsafe.Pointer(namesCount)), uintptr(unsafe.Pointer(types)), uintptr(unsafe.Pointer(typesCount)), 0)
	return kr(r)
}
