package mach

import "syscall"

// Kernel is the Mach and BSD surface the Target calls, one method per
// libSystem function, so that the Target's logic is ordinary Go that runs
// on every OS: on darwin the trampolines of zsyscall_darwin.go implement it
// (kernel_darwin.go), in tests a model of xnu does (mach/machtest).
//
// The methods keep the C calls' arguments and results, except that out
// parameters are returned rather than written through pointers (so that a
// call through the interface does not move the caller's variables to the
// heap) and that arrays the kernel allocates in the caller's address space
// are handed back as an address (to give back to VMDeallocate) and a view.
type Kernel interface {
	// TaskSelf is mach_task_self(): the caller's task port name. It
	// never changes for the life of the process.
	TaskSelf() uint32
	// ThreadSelf is mach_thread_self(): a new send right to the calling
	// thread, to release with PortDeallocate.
	ThreadSelf() uint32
	// GOARCH is the architecture macprof's own code runs as
	// (runtime.GOARCH on darwin): with sysctl.proc_translated it tells
	// whether macprof itself runs under Rosetta 2.
	GOARCH() string

	// TaskForPID is the Mach trap task_for_pid: a kern_return_t, and
	// the control port name (possibly MACH_PORT_NULL even on success).
	TaskForPID(self uint32, pid int) (task uint32, k KernReturn)
	// TaskReadForPID is the BSD system call task_read_for_pid: -1 and
	// an errno on failure, 0 on success, and the read port name
	// (possibly MACH_PORT_NULL even on success).
	TaskReadForPID(self uint32, pid int) (task uint32, r int32, errno syscall.Errno)
	// TaskThreads is task_threads: a new send right to every thread of
	// the task, in an array allocated in the caller's address space at
	// list (0 when count is 0); ports views it until VMDeallocate.
	TaskThreads(task uint32) (list uintptr, ports []uint32, k KernReturn)
	// TaskSuspend2 is task_suspend2: the task's suspension token (a
	// send-once right to its resume port).
	TaskSuspend2(task uint32) (token uint32, k KernReturn)
	// TaskResume2 is task_resume2: it consumes the token.
	TaskResume2(token uint32) KernReturn
	// TaskInfo is task_info: info has room for len(info) words; the
	// number filled is returned.
	TaskInfo(task, flavor uint32, info []uint32) (count uint32, k KernReturn)

	// ThreadSuspend is thread_suspend.
	ThreadSuspend(thread uint32) KernReturn
	// ThreadResume is thread_resume.
	ThreadResume(thread uint32) KernReturn
	// ThreadGetState is thread_get_state into len(state) words.
	ThreadGetState(thread, flavor uint32, state []uint32) (count uint32, k KernReturn)
	// ThreadInfo is thread_info into len(info) words.
	ThreadInfo(thread, flavor uint32, info []uint32) (count uint32, k KernReturn)

	// VMReadOverwrite is mach_vm_read_overwrite of len(dst) bytes at
	// addr: the number of bytes copied.
	VMReadOverwrite(task uint32, addr uint64, dst []byte) (n uint64, k KernReturn)
	// VMRegion is mach_vm_region(VM_REGION_BASIC_INFO_64) from addr: the
	// first region at or above addr, its basic info in *info, and the
	// object name port to release when it is not null.
	VMRegion(task uint32, addr uint64, info *VMRegionBasicInfo64Data) (start, size uint64, object uint32, k KernReturn)
	// PortDeallocate is mach_port_deallocate: drop one user reference
	// to a send right of task's space.
	PortDeallocate(task, name uint32) KernReturn
	// VMDeallocate is vm_deallocate of an array the kernel allocated.
	VMDeallocate(task uint32, addr uintptr, size uint64) KernReturn

	// ErrorString is mach_error_string.
	ErrorString(k KernReturn) string
	// ProcPIDPath is proc_pidpath: the path's length, or 0 on error
	// (with no errno the caller can read: Kill(pid, 0) tells whether
	// the process exists).
	ProcPIDPath(pid int, buf []byte) int
	// SysctlUint32 reads a 32-bit sysctl by name (sysctlbyname).
	SysctlUint32(name string) (v uint32, ok bool)
	// ProcFlags is sysctl kern.proc.pid.PID's kinfo_proc.kp_proc.p_flag;
	// ESRCH when there is no such process.
	ProcFlags(pid int) (flags int32, errno syscall.Errno)

	// Spawn is posix_spawn with POSIX_SPAWN_START_SUSPENDED; a non-nil
	// cred sets the child's credentials (posix_spawnattr_set_gid_np,
	// _set_groups_np, _set_uid_np), which only root may do.
	Spawn(path string, argv, env []string, cred *SpawnCred) (pid int, err error)
	// Geteuid is geteuid(2).
	Geteuid() int
	// Getenv is macprof's own environment variable key ("" when unset).
	Getenv(key string) string
	// LookupUser is getpwuid_r(3) of uid and getgrouplist(3) of that
	// user: every group the user is in.
	LookupUser(uid int) (UserInfo, error)
	// Kill is kill(2).
	Kill(pid int, sig syscall.Signal) error
	// Wait4 is wait4(2) for pid, blocking.
	Wait4(pid int) (syscall.WaitStatus, error)
}

// SpawnCred is who a launched command runs as: its user, primary group
// and supplementary groups (at most NGROUPS, 16, of them: the kernel asks
// the directory service for the rest because GMUID is the user, as
// initgroups(3) does).
type SpawnCred struct {
	UID, GID, GMUID int
	Groups          []int
}

// UserInfo is a user's account: login name, home directory, primary group
// and every group the user is in.
type UserInfo struct {
	Name, Home string
	GID        int
	Groups     []int
}

// RawCapture is what a Self capture does while one of the calling
// process's threads is suspended: thread_suspend, thread_get_state,
// mach_vm_read_overwrite of [sp, min(Hi, sp+len(Buf))) in reads of at most
// Chunk bytes when Lo <= sp < Hi (stopping at the first that fails),
// thread_resume. The fields are the inputs and, below the line, the
// results.
type RawCapture struct {
	Task, Port, Flavor uint32
	State              []uint32 // room for the flavor's words
	SPWord             int      // index in State of the SP's low word
	Mask               uint64   // strips PAC bits from SP
	Lo, Hi             uint64   // the stack region, when known
	Buf                []byte
	Chunk              uint64 // the largest single read: KernelBufferMax

	Count                        uint32 // words filled
	Copied                       uint64 // bytes copied into Buf
	SuspendKR, StateKR, ResumeKR KernReturn
}

// RawCapturer is implemented by kernels that must run a RawCapture without
// letting the Go scheduler in (darwin: a nosplit function and rawSyscall,
// because a stop-the-world waiting on the suspended thread would deadlock).
// Other kernels get DoRawCapture.
type RawCapturer interface {
	RawCapture(rc *RawCapture)
}

// DoRawCapture runs rc through k's ordinary calls, as a model kernel does.
// The thread is resumed whatever happens in between (a panic included).
func DoRawCapture(k Kernel, rc *RawCapture) {
	rc.Copied, rc.Count = 0, 0
	rc.StateKR, rc.ResumeKR = KernSuccess, KernSuccess
	if rc.SuspendKR = k.ThreadSuspend(rc.Port); rc.SuspendKR != KernSuccess {
		return
	}
	defer func() { rc.ResumeKR = k.ThreadResume(rc.Port) }()
	rc.Count, rc.StateKR = k.ThreadGetState(rc.Port, rc.Flavor, rc.State)
	if rc.StateKR != KernSuccess || len(rc.Buf) == 0 || int(rc.Count) < rc.SPWord+2 {
		return
	}
	sp := (uint64(rc.State[rc.SPWord]) | uint64(rc.State[rc.SPWord+1])<<32) & rc.Mask
	if sp < rc.Lo || sp >= rc.Hi || rc.Chunk == 0 {
		return
	}
	n := min(rc.Hi-sp, uint64(len(rc.Buf)))
	for rc.Copied < n {
		c := min(n-rc.Copied, rc.Chunk)
		if got, k := k.VMReadOverwrite(rc.Task, sp+rc.Copied, rc.Buf[rc.Copied:rc.Copied+c]); k != KernSuccess || got != c {
			return
		}
		rc.Copied += c
	}
}
