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
