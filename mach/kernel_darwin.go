//go:build darwin

package mach

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"github.com/macprof/macprof/target"
	"golang.org/x/sys/unix"
)

// The darwin Kernel: each method calls its binding in zsyscall_darwin.go
// and nothing more.

// Attach opens the task of process pid (see AttachKernel).
func Attach(pid int, opts target.Options) (*Target, error) { return AttachKernel(Darwin, pid, opts) }

// Self returns a Target for the calling process's other threads (see
// SelfKernel).
func Self(opts target.Options) (*Target, error) { return SelfKernel(Darwin, opts) }

// Launch starts a command suspended and attaches to it (see LaunchKernel).
func Launch(argv []string, env []string, opts target.Options) (*Target, error) {
	return LaunchKernel(Darwin, argv, env, opts)
}

// LaunchCommand starts a command with macprof's environment (see
// LaunchCommandKernel).
func LaunchCommand(args []string, opts target.Options) (*Launched, error) {
	return LaunchCommandKernel(Darwin, args, opts)
}

// Darwin is the real kernel, through libSystem.
var Darwin Kernel = darwinKernel{}

type darwinKernel struct{}

var (
	selfOnce sync.Once
	selfPort uint32
)

// TaskSelf returns mach_task_self(), asked once: the name never changes
// for the life of the process.
func (darwinKernel) TaskSelf() uint32 {
	selfOnce.Do(func() { selfPort = machTaskSelf() })
	return selfPort
}

func (darwinKernel) ThreadSelf() uint32 { return machThreadSelf() }
func (darwinKernel) GOARCH() string     { return runtime.GOARCH }

func (darwinKernel) TaskForPID(self uint32, pid int) (uint32, KernReturn) {
	var task uint32
	k := taskForPID(self, pid, &task)
	return task, k
}

func (darwinKernel) TaskReadForPID(self uint32, pid int) (uint32, int32, syscall.Errno) {
	var task uint32
	r, e := taskReadForPID(self, pid, &task)
	return task, r, e
}

func (darwinKernel) TaskThreads(task uint32) (uintptr, []uint32, KernReturn) {
	var list unsafe.Pointer
	var count uint32
	k := taskThreads(task, &list, &count)
	if k != KernSuccess || count == 0 {
		return 0, nil, k
	}
	return uintptr(list), unsafe.Slice((*uint32)(list), count), k
}

func (darwinKernel) TaskSuspend2(task uint32) (uint32, KernReturn) {
	var token uint32
	k := taskSuspend2(task, &token)
	return token, k
}

func (darwinKernel) TaskResume2(token uint32) KernReturn { return taskResume2(token) }

func (darwinKernel) TaskInfo(task, flavor uint32, info []uint32) (uint32, KernReturn) {
	count := uint32(len(info))
	k := taskInfo(task, flavor, unsafe.Pointer(unsafe.SliceData(info)), &count)
	return count, k
}

func (darwinKernel) ThreadSuspend(thread uint32) KernReturn { return threadSuspend(thread) }
func (darwinKernel) ThreadResume(thread uint32) KernReturn  { return threadResume(thread) }

func (darwinKernel) ThreadGetState(thread, flavor uint32, state []uint32) (uint32, KernReturn) {
	count := uint32(len(state))
	k := threadGetState(thread, flavor, unsafe.Pointer(unsafe.SliceData(state)), &count)
	return count, k
}

func (darwinKernel) ThreadInfo(thread, flavor uint32, info []uint32) (uint32, KernReturn) {
	count := uint32(len(info))
	k := threadInfo(thread, flavor, unsafe.Pointer(unsafe.SliceData(info)), &count)
	return count, k
}

func (darwinKernel) VMReadOverwrite(task uint32, addr uint64, dst []byte) (uint64, KernReturn) {
	var out uint64
	k := machVMReadOverwrite(task, addr, uint64(len(dst)), unsafe.Pointer(unsafe.SliceData(dst)), &out)
	return out, k
}

func (darwinKernel) VMRegion(task uint32, addr uint64, info *VMRegionBasicInfo64Data) (uint64, uint64, uint32, KernReturn) {
	var size uint64
	var object uint32
	count := uint32(VMRegionBasicInfoCount64)
	k := machVMRegion(task, &addr, &size, VMRegionBasicInfo64, unsafe.Pointer(info), &count, &object)
	return addr, size, object, k
}

func (darwinKernel) PortDeallocate(task, name uint32) KernReturn {
	return machPortDeallocate(task, name)
}

func (darwinKernel) VMDeallocate(task uint32, addr uintptr, size uint64) KernReturn {
	return vmDeallocate(task, addr, size)
}

func (darwinKernel) ErrorString(k KernReturn) string { return machErrorString(k) }

func (darwinKernel) ProcPIDPath(pid int, buf []byte) int { return procPIDPath(pid, buf) }

func (darwinKernel) SysctlUint32(name string) (uint32, bool) {
	b, err := syscall.BytePtrFromString(name)
	if err != nil {
		return 0, false
	}
	var v uint32
	size := unsafe.Sizeof(v)
	if sysctlByName(b, unsafe.Pointer(&v), &size, nil, 0) != 0 || size != unsafe.Sizeof(v) {
		return 0, false
	}
	return v, true
}

func (darwinKernel) ProcFlags(pid int) (int32, syscall.Errno) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		if errno, ok := err.(syscall.Errno); ok {
			if errno == syscall.EIO {
				// No such process: the size check failed on an empty answer.
				return 0, syscall.ESRCH
			}
			return 0, errno
		}
		return 0, syscall.EINVAL
	}
	return kp.Proc.P_flag, 0
}

func (darwinKernel) Spawn(path string, argv, env []string, cred *SpawnCred) (int, error) {
	return posixSpawnSuspended(path, argv, env, cred)
}

func (darwinKernel) Geteuid() int             { return os.Geteuid() }
func (darwinKernel) Getenv(key string) string { return os.Getenv(key) }

// LookupUser uses os/user, which on darwin calls libSystem's getpwuid_r
// and getgrouplist without cgo, so directory-service users are found.
func (darwinKernel) LookupUser(uid int) (UserInfo, error) {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return UserInfo{}, err
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return UserInfo{}, fmt.Errorf("user %d has group %q, not a group id", uid, u.Gid)
	}
	ids, err := u.GroupIds()
	if err != nil {
		return UserInfo{}, fmt.Errorf("groups of %s: %w", u.Username, err)
	}
	info := UserInfo{Name: u.Username, Home: u.HomeDir, GID: gid}
	for _, s := range ids {
		g, err := strconv.Atoi(s)
		if err != nil {
			return UserInfo{}, fmt.Errorf("user %d has group %q, not a group id", uid, s)
		}
		info.Groups = append(info.Groups, g)
	}
	return info, nil
}

func (darwinKernel) Kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

func (darwinKernel) Wait4(pid int) (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			return ws, err
		}
	}
}

// RawCapture runs rc with rawCapture, which lets no scheduler in. It
// cannot defer the resume (the nosplit code between suspend and resume
// calls nothing that can panic but the three raw system calls).
func (darwinKernel) RawCapture(rc *RawCapture) {
	var buf unsafe.Pointer
	if len(rc.Buf) > 0 {
		buf = unsafe.Pointer(&rc.Buf[0])
	}
	rc.Count = uint32(len(rc.State))
	rc.SuspendKR, rc.StateKR, rc.ResumeKR = rawCapture(rc.Task, rc.Port, rc.Flavor,
		unsafe.Pointer(unsafe.SliceData(rc.State)), &rc.Count, (*uint64)(unsafe.Pointer(&rc.State[rc.SPWord])),
		rc.Mask, rc.Lo, rc.Hi, buf, uint64(len(rc.Buf)), rc.Chunk, &rc.Copied)
}

// rawCapture suspends a thread of this process, reads its registers and
// copies [sp, min(hi, sp+capacity)) if lo <= sp < hi in reads of at most
// chunk bytes (KernelBufferMax), stopping at the first that fails, and
// resumes it, calling nothing that could let the scheduler in. spField
// points at the SP field inside state; mask strips PAC bits from it.
//
//go:nosplit
//go:norace
func rawCapture(task, port, flavor uint32, state unsafe.Pointer, count *uint32, spField *uint64, mask, lo, hi uint64, buf unsafe.Pointer, capacity, chunk uint64, copied *uint64) (suspendKR, stateKR, resumeKR KernReturn) {
	*copied = 0
	if k := rawThreadSuspend(port); k != KernSuccess {
		return k, KernSuccess, KernSuccess
	}
	stateKR = rawThreadGetState(port, flavor, state, count)
	if stateKR == KernSuccess && capacity > 0 && chunk > 0 {
		sp := *spField & mask
		if sp >= lo && sp < hi {
			n := hi - sp
			if n > capacity {
				n = capacity
			}
			total := uint64(0)
			for total < n {
				c := n - total
				if c > chunk {
					c = chunk
				}
				if rawMachVMReadOverwrite(task, sp+total, c, unsafe.Add(buf, total), copied) != KernSuccess || *copied != c {
					break
				}
				total += c
			}
			*copied = total
		}
	}
	resumeKR = rawThreadResume(port)
	return KernSuccess, stateKR, resumeKR
}

// posixSpawnStartSuspended is POSIX_SPAWN_START_SUSPENDED (<spawn.h>): the
// child is created as if it had received SIGSTOP before its first
// instruction, and SIGCONT resumes it.
const posixSpawnStartSuspended = 0x0080

// posixSpawnSuspended starts path with POSIX_SPAWN_START_SUSPENDED, as
// cred says when it is not nil: the kernel (bsd/kern/kern_exec.c
// spawn_posix_cred_adopt) runs setgid, setgroups and setuid on the child
// before its exec, for a root caller only (EPERM otherwise).
func posixSpawnSuspended(path string, argv, env []string, cred *SpawnCred) (int, error) {
	cpath, err := syscall.BytePtrFromString(path)
	if err != nil {
		return 0, err
	}
	cargv, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return 0, err
	}
	cenv, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return 0, err
	}
	var attr unsafe.Pointer
	if e := posixSpawnattrInit(&attr); e != 0 {
		return 0, os.NewSyscallError("posix_spawnattr_init", e)
	}
	defer posixSpawnattrDestroy(&attr)
	if e := posixSpawnattrSetflags(&attr, posixSpawnStartSuspended); e != 0 {
		return 0, os.NewSyscallError("posix_spawnattr_setflags", e)
	}
	if cred != nil {
		groups := make([]uint32, len(cred.Groups))
		for i, g := range cred.Groups {
			groups[i] = uint32(g)
		}
		if len(groups) == 0 {
			return 0, errors.New("posix_spawnattr_set_groups_np: no groups")
		}
		if e := posixSpawnattrSetGIDNP(&attr, uint32(cred.GID)); e != 0 {
			return 0, os.NewSyscallError("posix_spawnattr_set_gid_np", e)
		}
		if e := posixSpawnattrSetGroupsNP(&attr, int32(len(groups)), &groups[0], uint32(cred.GMUID)); e != 0 {
			return 0, os.NewSyscallError("posix_spawnattr_set_groups_np", e)
		}
		if e := posixSpawnattrSetUIDNP(&attr, uint32(cred.UID)); e != 0 {
			return 0, os.NewSyscallError("posix_spawnattr_set_uid_np", e)
		}
	}
	var pid int32
	if e := posixSpawn(&pid, cpath, nil, &attr, &cargv[0], &cenv[0]); e != 0 {
		return 0, os.NewSyscallError("posix_spawn", e)
	}
	return int(pid), nil
}
