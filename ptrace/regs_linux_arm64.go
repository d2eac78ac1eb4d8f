//go:build linux

package ptrace

import (
	"golang.org/x/sys/unix"

	"github.com/macprof/macprof/unwind"
)

const nativeArch = unwind.ArchARM64

// regsBuf holds the kernel's register layout for one read.
type regsBuf = unix.PtraceRegsArm64

// ntPRStatus is NT_PRSTATUS, the general-purpose register set.
const ntPRStatus = 1

func getRegs(tid int, buf *regsBuf) (unwind.Regs, error) {
	if err := unix.PtraceGetRegSetArm64(tid, ntPRStatus, buf); err != nil {
		return unwind.Regs{}, err
	}
	return unwind.Regs{PC: buf.Pc, SP: buf.Sp, FP: buf.Regs[29], LR: buf.Regs[30]}, nil
}

// perfRegsMask selects, in a kernel sample, the registers a walk starts
// from (arch/arm64/include/uapi/asm/perf_regs.h: X29 29, LR 30, SP 31,
// PC 32).
const perfRegsMask = 1<<29 | 1<<30 | 1<<31 | 1<<32

// perfRegs maps the registers of perfRegsMask, in bit order, to Regs.
func perfRegs(v []uint64) unwind.Regs {
	return unwind.Regs{FP: v[0], LR: v[1], SP: v[2], PC: v[3]}
}
