// Trampolines into libSystem, one per function, the way golang.org/x/sys/unix
// calls libc on darwin. Each list entry in zsyscall_darwin.go has one here;
// TestTrampolinesMatch checks that on every OS.

#include "textflag.h"

TEXT libc_task_for_pid_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_task_for_pid(SB)
GLOBL	·libc_task_for_pid_trampoline_addr(SB), RODATA, $8
DATA	·libc_task_for_pid_trampoline_addr(SB)/8, $libc_task_for_pid_trampoline<>(SB)

TEXT libc_task_read_for_pid_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_task_read_for_pid(SB)
GLOBL	·libc_task_read_for_pid_trampoline_addr(SB), RODATA, $8
DATA	·libc_task_read_for_pid_trampoline_addr(SB)/8, $libc_task_read_for_pid_trampoline<>(SB)

TEXT libc_mach_task_self_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_mach_task_self(SB)
GLOBL	·libc_mach_task_self_trampoline_addr(SB), RODATA, $8
DATA	·libc_mach_task_self_trampoline_addr(SB)/8, $libc_mach_task_self_trampoline<>(SB)

TEXT libc_mach_thread_self_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_mach_thread_self(SB)
GLOBL	·libc_mach_thread_self_trampoline_addr(SB), RODATA, $8
DATA	·libc_mach_thread_self_trampoline_addr(SB)/8, $libc_mach_thread_self_trampoline<>(SB)

TEXT libc_task_threads_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_task_threads(SB)
GLOBL	·libc_task_threads_trampoline_addr(SB), RODATA, $8
DATA	·libc_task_threads_trampoline_addr(SB)/8, $libc_task_threads_trampoline<>(SB)

TEXT libc_task_suspend2_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_task_suspend2(SB)
GLOBL	·libc_task_suspend2_trampoline_addr(SB), RODATA, $8
DATA	·libc_task_suspend2_trampoline_addr(SB)/8, $libc_task_suspend2_trampoline<>(SB)

TEXT libc_task_resume2_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_task_resume2(SB)
GLOBL	·libc_task_resume2_trampoline_addr(SB), RODATA, $8
DATA	·libc_task_resume2_trampoline_addr(SB)/8, $libc_task_resume2_trampoline<>(SB)


TEXT libc_thread_suspend_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_thread_suspend(SB)
GLOBL	·libc_thread_suspend_trampoline_addr(SB), RODATA, $8
DATA	·libc_thread_suspend_trampoline_addr(SB)/8, $libc_thread_suspend_trampoline<>(SB)

TEXT libc_thread_resume_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_thread_resume(SB)
GLOBL	·libc_thread_resume_trampoline_addr(SB), RODATA, $8
DATA	·libc_thread_resume_trampoline_addr(SB)/8, $libc_thread_resume_trampoline<>(SB)

TEXT libc_thread_get_state_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_thread_get_state(SB)
GLOBL	·libc_thread_get_state_trampoline_addr(SB), RODATA, $8
DATA	·libc_thread_get_state_trampoline_addr(SB)/8, $libc_thread_get_state_trampoline<>(SB)

TEXT libc_thread_info_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_thread_info(SB)
GLOBL	·libc_thread_info_trampoline_addr(SB), RODATA, $8
DATA	·libc_thread_info_trampoline_addr(SB)/8, $libc_thread_info_trampoline<>(SB)

TEXT libc_mach_vm_read_overwrite_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_mach_vm_read_overwrite(SB)
GLOBL	·libc_mach_vm_read_overwrite_trampoline_addr(SB), RODATA, $8
DATA	·libc_mach_vm_read_overwrite_trampoline_addr(SB)/8, $libc_mach_vm_read_overwrite_trampoline<>(SB)

TEXT libc_mach_vm_region_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_mach_vm_region(SB)
GLOBL	·libc_mach_vm_region_trampoline_addr(SB), RODATA, $8
DATA	·libc_mach_vm_region_trampoline_addr(SB)/8, $libc_mach_vm_region_trampoline<>(SB)

TEXT libc_task_info_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_task_info(SB)
GLOBL	·libc_task_info_trampoline_addr(SB), RODATA, $8
DATA	·libc_task_info_trampoline_addr(SB)/8, $libc_task_info_trampoline<>(SB)

TEXT libc_mach_port_deallocate_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_mach_port_deallocate(SB)
GLOBL	·libc_mach_port_deallocate_trampoline_addr(SB), RODATA, $8
DATA	·libc_mach_port_deallocate_trampoline_addr(SB)/8, $libc_mach_port_deallocate_trampoline<>(SB)

TEXT libc_vm_deallocate_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_vm_deallocate(SB)
GLOBL	·libc_vm_deallocate_trampoline_addr(SB), RODATA, $8
DATA	·libc_vm_deallocate_trampoline_addr(SB)/8, $libc_vm_deallocate_trampoline<>(SB)

TEXT libc_mach_error_string_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_mach_error_string(SB)
GLOBL	·libc_mach_error_string_trampoline_addr(SB), RODATA, $8
DATA	·libc_mach_error_string_trampoline_addr(SB)/8, $libc_mach_error_string_trampoline<>(SB)

TEXT libc_proc_pidpath_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_proc_pidpath(SB)
GLOBL	·libc_proc_pidpath_trampoline_addr(SB), RODATA, $8
DATA	·libc_proc_pidpath_trampoline_addr(SB)/8, $libc_proc_pidpath_trampoline<>(SB)

TEXT libc_sysctlbyname_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_sysctlbyname(SB)
GLOBL	·libc_sysctlbyname_trampoline_addr(SB), RODATA, $8
DATA	·libc_sysctlbyname_trampoline_addr(SB)/8, $libc_sysctlbyname_trampoline<>(SB)

TEXT libc_posix_spawn_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_posix_spawn(SB)
GLOBL	·libc_posix_spawn_trampoline_addr(SB), RODATA, $8
DATA	·libc_posix_spawn_trampoline_addr(SB)/8, $libc_posix_spawn_trampoline<>(SB)

TEXT libc_posix_spawnattr_init_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_posix_spawnattr_init(SB)
GLOBL	·libc_posix_spawnattr_init_trampoline_addr(SB), RODATA, $8
DATA	·libc_posix_spawnattr_init_trampoline_addr(SB)/8, $libc_posix_spawnattr_init_trampoline<>(SB)

TEXT libc_posix_spawnattr_setflags_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_posix_spawnattr_setflags(SB)
GLOBL	·libc_posix_spawnattr_setflags_trampoline_addr(SB), RODATA, $8
DATA	·libc_posix_spawnattr_setflags_trampoline_addr(SB)/8, $libc_posix_spawnattr_setflags_trampoline<>(SB)

TEXT libc_posix_spawnattr_destroy_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_posix_spawnattr_destroy(SB)
GLOBL	·libc_posix_spawnattr_destroy_trampoline_addr(SB), RODATA, $8
DATA	·libc_posix_spawnattr_destroy_trampoline_addr(SB)/8, $libc_posix_spawnattr_destroy_trampoline<>(SB)

TEXT libc_mach_port_names_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_mach_port_names(SB)
GLOBL	·libc_mach_port_names_trampoline_addr(SB), RODATA, $8
DATA	·libc_mach_port_names_trampoline_addr(SB)/8, $libc_mach_port_names_trampoline<>(SB)

TEXT libc_posix_spawnattr_set_uid_np_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_posix_spawnattr_set_uid_np(SB)
GLOBL	·libc_posix_spawnattr_set_uid_np_trampoline_addr(SB), RODATA, $8
DATA	·libc_posix_spawnattr_set_uid_np_trampoline_addr(SB)/8, $libc_posix_spawnattr_set_uid_np_trampoline<>(SB)

TEXT libc_posix_spawnattr_set_gid_np_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_posix_spawnattr_set_gid_np(SB)
GLOBL	·libc_posix_spawnattr_set_gid_np_trampoline_addr(SB), RODATA, $8
DATA	·libc_posix_spawnattr_set_gid_np_trampoline_addr(SB)/8, $libc_posix_spawnattr_set_gid_np_trampoline<>(SB)

TEXT libc_posix_spawnattr_set_groups_np_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_posix_spawnattr_set_groups_np(SB)
GLOBL	·libc_posix_spawnattr_set_groups_np_trampoline_addr(SB), RODATA, $8
DATA	·libc_posix_spawnattr_set_groups_np_trampoline_addr(SB)/8, $libc_posix_spawnattr_set_groups_np_trampoline<>(SB)
