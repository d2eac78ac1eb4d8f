//go:build linux && (amd64 || arm64)

package ptrace

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Descendant rings sample a command's descendants, but their events are
// inherited by the command's own threads too, whose samples collect drops
// (the threads have rings of their own): each would cost the kernel a
// second stack copy, written into a ring macprof must then drain as often
// as busy threads fill it. A BPF program on each event (PERF_EVENT_IOC_SET_BPF,
// inherited with it) drops the samples of the command's process in the
// kernel, before anything is copied. Without one (no CAP_BPF, a kernel
// without BPF, macprof in a PID namespace whose numbers the program would
// not see) the samples are dropped by collect as before.

// bpfProgLoadAttr is the start of union bpf_attr that BPF_PROG_LOAD reads;
// the kernel takes the fields it is not given as zero.
type bpfProgLoadAttr struct {
	progType    uint32
	insnCnt     uint32
	insns       uint64
	license     uint64
	logLevel    uint32
	logSize     uint32
	logBuf      uint64
	kernVersion uint32
	progFlags   uint32
}

// bpfFuncGetCurrentPidTgid is the helper that returns the sampled task's
// thread group (its process) in the upper 32 bits, as the initial PID
// namespace numbers it.
const bpfFuncGetCurrentPidTgid = 14

// initPidNSInode is the initial PID namespace's inode (PROC_PID_INIT_INO):
// only a macprof in it knows processes by the numbers the helper returns.
const initPidNSInode = 0xEFFFFFFC

// dropProcessProgram returns the instructions of a perf_event program that
// drops (returns 0 for) the samples of process pid and keeps every other's.
func dropProcessProgram(pid int) []byte {
	insn := func(code, regs uint8, off int16, imm int32) []byte {
		b := make([]byte, 8)
		b[0], b[1] = code, regs
		binary.LittleEndian.PutUint16(b[2:], uint16(off))
		binary.LittleEndian.PutUint32(b[4:], uint32(imm))
		return b
	}
	var p []byte
	p = append(p, insn(0x85, 0, 0, bpfFuncGetCurrentPidTgid)...) // call get_current_pid_tgid
	p = append(p, insn(0x77, 0, 0, 32)...)                       // r0 >>= 32: the process
	p = append(p, insn(0x15, 0, 2, int32(pid))...)               // if r0 == pid goto drop
	p = append(p, insn(0xb7, 0, 0, 1)...)                        // r0 = 1: keep
	p = append(p, insn(0x95, 0, 0, 0)...)                        // exit
	p = append(p, insn(0xb7, 0, 0, 0)...)                        // drop: r0 = 0
	p = append(p, insn(0x95, 0, 0, 0)...)                        // exit
	return p
}

// loadDropProcess loads dropProcessProgram(pid) and returns its file, or
// an error where it cannot serve (see above).
func loadDropProcess(pid int) (int, error) {
	if pid <= 0 || pid > 1<<30 {
		return -1, fmt.Errorf("bpf filter: pid %d", pid)
	}
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/pid", &st); err != nil {
		return -1, fmt.Errorf("bpf filter: %w", err)
	}
	if st.Ino != initPidNSInode {
		return -1, fmt.Errorf("bpf filter: macprof is not in the initial PID namespace")
	}
	prog := dropProcessProgram(pid)
	license := []byte("Dual MIT/GPL\x00")
	attr := bpfProgLoadAttr{
		progType: unix.BPF_PROG_TYPE_PERF_EVENT,
		insnCnt:  uint32(len(prog) / 8),
		insns:    uint64(uintptr(unsafe.Pointer(&prog[0]))),
		license:  uint64(uintptr(unsafe.Pointer(&license[0]))),
	}
	fd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_LOAD, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	runtime.KeepAlive(prog)
	runtime.KeepAlive(license)
	if errno != 0 {
		return -1, fmt.Errorf("bpf filter: load: %w", os.NewSyscallError("bpf", errno))
	}
	return int(fd), nil
}

// setDropProcess attaches the program prog to the sampling event fd.
func setDropProcess(fd, prog int) error {
	if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_BPF, prog); err != nil {
		return fmt.Errorf("bpf filter: attach: %w", err)
	}
	return nil
}
