//go:build linux

package ptrace

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/macprof/macprof/unwind"
)

const nativeArch = unwind.ArchAMD64

// regsBuf holds the kernel's register layout for one read.
type regsBuf = unix.PtraceRegs

func getRegs(tid int, buf *regsBuf) (unwind.Regs, error) {
	if err := ptraceRaw(unix.PTRACE_GETREGS, tid, 0, uintptr(unsafe.Pointer(buf))); err != nil {
		return unwind.Regs{}, err
	}
	return unwind.Regs{PC: buf.Rip, SP: buf.Rsp, FP: buf.Rbp}, nil
}

// perfRegsMask selects, in a kernel sample, the registers a walk starts
// from (arch/x86/include/uapi/asm/perf_regs.h: BP 6, SP 7, IP 8).
const perfRegsMask = 1<<6 | 1<<7 | 1<<8

// perfRegs maps the registers of perfRegsMask, in bit order, to Regs.
func perfRegs(v []uint64) unwind.Regs { return unwind.Regs{FP: v[0], SP: v[1], PC: v[2]} }
