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
