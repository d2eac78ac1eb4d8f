//go:build linux && (amd64 || arm64)

package ptrace

import (
	"bytes"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The package's system calls, each wrapped here: most as raw system calls
// for the capture path, the rest (below, "Regular system calls") through
// x/sys/unix for the paths that may block or are off the hot path.

// ptraceRaw issues a ptrace request that x/sys/unix has no wrapper for (or
// whose wrapper drops the data argument).
//
// The capture path's system calls are raw (no entersyscall/exitsyscall):
// they are short, and a regular system call lets the runtime's sysmon hand
// the P to another thread whenever one takes over 20 µs, which at sampling
// rates costs more CPU in context switches than the calls themselves.
func ptraceRaw(req, tid int, addr, data uintptr) error {
	_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, uintptr(req), uintptr(tid), addr, data, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// wait4Raw is wait4 without the runtime's system call bookkeeping: with
// WNOHANG a raw system call, else one that hands its P back first
// (wait4Blocking).
func wait4Raw(tid int, ws *unix.WaitStatus, options int) (int, error) {
	var status uint32
	var r uintptr
	var e unix.Errno
	if options&unix.WNOHANG != 0 {
		r, _, e = unix.RawSyscall6(unix.SYS_WAIT4, uintptr(tid), uintptr(unsafe.Pointer(&status)), uintptr(options), 0, 0, 0)
	} else {
		r, e = wait4Blocking(tid, &status, options)
	}
	if e != 0 {
		return 0, e
	}
	*ws = unix.WaitStatus(status)
	return int(r), nil
}

// wait4Blocking is a wait4 that may block, made as the runtime makes the
// calls it knows will block: its P is handed off before the call
// (entersyscallblock) and taken back after it. A raw system call that
// blocks keeps its goroutine running on its P, so for as long as the
// tracee takes to stop (tens of milliseconds on a loaded machine) no other
// goroutine may run there, sysmon polls every 20 µs to 10 ms, and it
// signals the thread every 10 ms to preempt a goroutine that cannot be; a
// regular system call (entersyscall) wakes a sleeping sysmon at its start
// and keeps the P for up to 10 ms. With the P idle, sysmon sleeps.
//
//go:nosplit
//go:norace
func wait4Blocking(tid int, status *uint32, options int) (uintptr, unix.Errno) {
	entersyscallblock()
	r, _, e := unix.RawSyscall6(unix.SYS_WAIT4, uintptr(tid), uintptr(unsafe.Pointer(status)), uintptr(options), 0, 0, 0)
	exitsyscall()
	return r, e
}

// entersyscallblock and exitsyscall are the runtime's own, which it keeps
// reachable by linkname for code that makes its own blocking system calls
// (go.dev/issue/67401).
//
//go:linkname entersyscallblock runtime.entersyscallblock
func entersyscallblock()

//go:linkname exitsyscall runtime.exitsyscall
func exitsyscall()

// preadRaw is pread(2) at offset 0 as a raw system call.
func preadRaw(fd int, buf []byte) (int, error) { return preadAtRaw(fd, buf, 0) }

// preadAtRaw is pread(2) as a raw system call.
func preadAtRaw(fd int, buf []byte, off int64) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	r, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(off), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func seize(tid int, options int) error {
	return ptraceRaw(unix.PTRACE_SEIZE, tid, 0, uintptr(options))
}

func interrupt(tid int) error { return ptraceRaw(unix.PTRACE_INTERRUPT, tid, 0, 0) }

func cont(tid, sig int) error { return ptraceRaw(unix.PTRACE_CONT, tid, 0, uintptr(sig)) }

func listen(tid int) error { return ptraceRaw(unix.PTRACE_LISTEN, tid, 0, 0) }

func detach(tid, sig int) error { return ptraceRaw(unix.PTRACE_DETACH, tid, 0, uintptr(sig)) }

// peekWaitable returns the id of a child or tracee that has a state change
// to report, without consuming it (WNOWAIT), or 0 when none has.
func peekWaitable() (int, error) {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WNOHANG|unix.WNOWAIT|unix.WSTOPPED|unix.WEXITED|unix.WALL, nil)
	if err != nil {
		return 0, err
	}
	return siginfoPID(&info), nil
}

// memReader reads a process's memory with process_vm_readv. It keeps its
// iovecs so that reads do not allocate; it is not safe for concurrent use.
type memReader struct {
	pid  int
	iov  [1]unix.Iovec
	riov [1]unix.RemoteIovec
}

// ReadMemory fills dst from addr or fails.
func (m *memReader) ReadMemory(addr uint64, dst []byte) error {
	n, err := m.readSome(addr, dst)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return unix.EFAULT
	}
	return nil
}

// readSome reads as much of dst as is mapped from addr on.
func (m *memReader) readSome(addr uint64, dst []byte) (int, error) {
	if len(dst) == 0 {
		return 0, nil
	}
	m.iov[0].Base = &dst[0]
	m.iov[0].SetLen(len(dst))
	m.riov[0].Base = uintptr(addr)
	m.riov[0].Len = len(dst)
	r, _, e := unix.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(m.pid),
		uintptr(unsafe.Pointer(&m.iov[0])), 1, uintptr(unsafe.Pointer(&m.riov[0])), 1, 0)
	m.iov[0].Base = nil
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// seekStartRaw rewinds fd to offset 0 with a raw lseek.
func seekStartRaw(fd int) error {
	_, _, e := unix.RawSyscall(unix.SYS_LSEEK, uintptr(fd), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// getdentsRaw is getdents64(2) as a raw system call.
func getdentsRaw(fd int, buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	r, _, e := unix.RawSyscall(unix.SYS_GETDENTS64, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// openRaw opens path, a NUL-terminated byte string, with a raw openat: no
// allocation and no hand-off of the P, for /proc files read while sampling.
func openRaw(path []byte, flags int) (int, error) {
	if len(path) == 0 || path[len(path)-1] != 0 {
		return -1, unix.EINVAL
	}
	atFDCWD := unix.AT_FDCWD
	fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(atFDCWD), uintptr(unsafe.Pointer(&path[0])), uintptr(flags), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// readlinkRaw reads the target of the symbolic link at path (NUL-terminated)
// into buf with a raw readlinkat: the sampler reads /proc/PID/exe around
// each ring it opens, and a regular system call would wake a sleeping
// sysmon, which then polls every 20 µs for as long as the tick runs.
func readlinkRaw(path, buf []byte) (int, error) {
	if len(path) == 0 || path[len(path)-1] != 0 || len(buf) == 0 {
		return 0, unix.EINVAL
	}
	atFDCWD := unix.AT_FDCWD
	n, _, e := unix.RawSyscall6(unix.SYS_READLINKAT, uintptr(atFDCWD), uintptr(unsafe.Pointer(&path[0])), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// closeRaw closes fd with a raw system call: a regular one wakes a
// sleeping sysmon (readlinkRaw), and the sampler closes a ring each time it
// switches one.
func closeRaw(fd int) { unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0) }

// readFileRaw reads up to len(buf) bytes of the file at path (NUL-terminated)
// with raw open, pread and close.
func readFileRaw(path []byte, buf []byte) (int, error) {
	fd, err := openRaw(path, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return 0, err
	}
	defer closeRaw(fd)
	return preadRaw(fd, buf)
}

// pidfdExited reports whether the process of pidfd has exited, its threads
// all gone and its leader a zombie or reaped (the pidfd polls readable),
// without waiting. The poll is raw, as it never blocks: a regular system
// call wakes a sleeping sysmon, which then polls every 20 µs for as long as
// the tick runs, and this one is made every listing.
func pidfdExited(pidfd int) bool {
	fds := [1]unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	var zero unix.Timespec
	n, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	return e == 0 && n > 0 && fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0
}

// getcpuRaw returns the CPU the calling thread runs on, or -1.
func getcpuRaw() int {
	var cpu uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 {
		return -1
	}
	return int(cpu)
}

// nextDirent returns the name of the first linux_dirent64 record in b
// (getdents64 output) and the records after it; name is nil when b holds
// no complete record.
func nextDirent(b []byte) (name, rest []byte) {
	// d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
	if len(b) < 19 {
		return nil, nil
	}
	reclen := int(b[16]) | int(b[17])<<8
	if reclen < 19 || reclen > len(b) {
		return nil, nil
	}
	name = b[19:reclen]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	return name, b[reclen:]
}

// gettidRaw returns the calling OS thread's id.
func gettidRaw() int {
	tid, _, _ := unix.RawSyscall(unix.SYS_GETTID, 0, 0, 0)
	return int(tid)
}

// rtSigaction is rt_sigaction(2) with the kernel's own struct sigaction,
// which the stop timer and the SIGCHLD flag change in place.
func rtSigaction(sig unix.Signal, act, old *sigactionKernel) error {
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), 8, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// timerCreateRaw creates a CLOCK_MONOTONIC POSIX timer that delivers ev.
func timerCreateRaw(ev *sigevent) (int32, error) {
	var id int32
	_, _, e := unix.RawSyscall(unix.SYS_TIMER_CREATE, uintptr(unix.CLOCK_MONOTONIC), uintptr(unsafe.Pointer(ev)), uintptr(unsafe.Pointer(&id)))
	if e != 0 {
		return 0, e
	}
	return id, nil
}

// timerSettimeRaw arms (or, with a zero spec, disarms) timer id.
func timerSettimeRaw(id int32, spec *unix.ItimerSpec) error {
	_, _, e := unix.RawSyscall6(unix.SYS_TIMER_SETTIME, uintptr(id), 0, uintptr(unsafe.Pointer(spec)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// processCPUClock reads a process's CPU-time clock, which counts its ended
// threads too: clock id MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) from
// include/linux/posix-timers.h, as glibc's clock_getcpuclockid makes it.
// The vDSO does not serve such clocks, and the sampler reads it at every
// tick, so it is a raw system call: a regular one would wake the runtime's
// sysmon from its deep sleep at each tick.
func processCPUClock(pid int) (time.Duration, error) {
	var ts unix.Timespec
	clock := int32(^pid)<<3 | 2
	if _, _, e := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, e
	}
	return time.Duration(ts.Nano()), nil
}

// timerDeleteRaw deletes timer id.
func timerDeleteRaw(id int32) { unix.RawSyscall(unix.SYS_TIMER_DELETE, uintptr(id), 0, 0) }

// Regular system calls.

// wait4 is wait4(2) as a regular system call, for the persistent tracer
// thread, which may block.
func wait4(tid int, ws *unix.WaitStatus, options int) (int, error) {
	return unix.Wait4(tid, ws, options, nil)
}

// ptraceEventMsg returns the message of a tracee's last ptrace event (a new
// thread's id for PTRACE_EVENT_CLONE).
func ptraceEventMsg(tid int) (uint, error) { return unix.PtraceGetEventMsg(tid) }

// openFile opens path with flags (O_RDONLY and the like), a raw openat: it
// opens /proc files of threads found while sampling.
func openFile(path string, flags int) (int, error) {
	b, err := unix.ByteSliceFromString(path)
	if err != nil {
		return -1, err
	}
	return openRaw(b, flags)
}

// closeFD closes fd.
func closeFD(fd int) { unix.Close(fd) }

// pidfdOpen opens a pidfd of process pid, close-on-exec (pidfds are).
func pidfdOpen(pid int) (int, error) { return unix.PidfdOpen(pid, 0) }

// setThreadNice sets the nice value of one OS thread, where allowed.
func setThreadNice(tid, nice int) { unix.Setpriority(unix.PRIO_PROCESS, tid, nice) }

// haveCapability reports whether capability c is in macprof's effective
// set.
func haveCapability(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}

// perfEventOpen opens a perf_event on thread tid, on any CPU, close-on-exec.
func perfEventOpen(attr *unix.PerfEventAttr, tid int) (int, error) {
	return perfEventOpenRaw(attr, tid, -1)
}

// perfEventOpenCPU opens a perf event on process pid (and, with inherit,
// the threads it creates) counted on one CPU.
func perfEventOpenCPU(attr *unix.PerfEventAttr, pid, cpu int) (int, error) {
	return perfEventOpenRaw(attr, pid, cpu)
}

// perfEventOpenRaw is perf_event_open(2), with no group, close-on-exec, as
// a raw system call: the sampler opens a ring for each thread it finds,
// and the call does not block.
func perfEventOpenRaw(attr *unix.PerfEventAttr, pid, cpu int) (int, error) {
	noGroup := -1
	fd, _, e := unix.RawSyscall6(unix.SYS_PERF_EVENT_OPEN, uintptr(unsafe.Pointer(attr)), uintptr(pid), uintptr(cpu), uintptr(noGroup), unix.PERF_FLAG_FD_CLOEXEC, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// mmapShared maps size bytes of fd, read-write and shared, with a raw
// mmap: the sampler maps a ring for each thread it finds, and the kernel
// allocates it without blocking.
func mmapShared(fd, size int) ([]byte, error) {
	if size <= 0 {
		return nil, unix.EINVAL
	}
	addr, _, e := unix.RawSyscall6(unix.SYS_MMAP, 0, uintptr(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED, uintptr(fd), 0)
	if e != 0 {
		return nil, e
	}
	// The mapping is not Go's memory, so its address is taken as a
	// pointer as it is (read through &addr: vet's unsafeptr check cannot
	// tell a mapping's address from a hidden Go pointer).
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), size), nil
}

// munmap unmaps a mapping made by mmapShared (and only such a mapping: a
// slice of Go's heap would be unmapped under it).
func munmap(mem []byte) {
	if len(mem) > 0 {
		unix.RawSyscall(unix.SYS_MUNMAP, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), 0)
	}
}

// clockMonotonic reads CLOCK_MONOTONIC in nanoseconds with a raw system
// call (the clock perf_event_attr.use_clockid stamps samples with).
func clockMonotonic() (int64, error) {
	var ts unix.Timespec
	if _, _, e := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, e
	}
	return ts.Nano(), nil
}
