package mach

import "github.com/macprof/macprof/unwind"

// DefaultVirtualAddressBits is used when sysctl machdep.virtual_address_size
// is unavailable (x86_64 Macs and older arm64 kernels).
const DefaultVirtualAddressBits = 47

// AddrMask returns the mask that strips pointer-authentication bits from a
// user address on a machine whose virtual addresses have bits significant
// bits: ^uint64(0) >> (64 - bits). Values outside [32, 64] (a sysctl that
// failed or returned nonsense) fall back to DefaultVirtualAddressBits.
func AddrMask(bits int) uint64 {
	if bits < 32 || bits > 64 {
		bits = DefaultVirtualAddressBits
	}
	return ^uint64(0) >> (64 - bits)
}

// StateFlavor says which thread_get_state flavor reads a thread's
// registers, and how many 32-bit words it fills.
type StateFlavor struct {
	Arch   unwind.Arch
	Flavor uint32
	Count  uint32
}

// FlavorFor picks the register flavor for a target. On an Intel Mac every
// thread is x86_64. On Apple silicon a native thread is arm64 and a thread
// of a process translated by Rosetta 2 is x86_64; whether the kernel hands
// out x86_THREAD_STATE64 for it depends on the caller (see docs/DARWIN.md),
// so a failure there is reported, not guessed around.
func FlavorFor(hostARM64, targetTranslated bool) StateFlavor {
	if hostARM64 && !targetTranslated {
		return StateFlavor{Arch: unwind.ArchARM64, Flavor: ArmThreadState64, Count: ArmThreadState64Count}
	}
	return StateFlavor{Arch: unwind.ArchAMD64, Flavor: X86ThreadState64, Count: X86ThreadState64Count}
}

// DecodeState turns the state thread_get_state filled into registers: arm
// for an arm64 flavor, x86 for x86_64. count is the number of 32-bit words
// the kernel reported; mask strips PAC bits on arm64. ok is false when
// count is too small for the flavor.
func DecodeState(f StateFlavor, arm *ArmThreadState, x86 *X86ThreadState, count uint32, mask uint64) (regs unwind.Regs, ok bool) {
	switch f.Arch {
	case unwind.ArchARM64:
		if count < ArmThreadState64Count {
			return unwind.Regs{}, false
		}
		return arm.Regs(mask), true
	case unwind.ArchAMD64:
		if count < X86ThreadState64Count {
			return unwind.Regs{}, false
		}
		return x86.Regs(), true
	}
	return unwind.Regs{}, false
}

// PTranslated is P_TRANSLATED in kinfo_proc.kp_proc.p_flag: the process is
// an x86_64 program run by Rosetta 2 (bsd/sys/proc.h).
const PTranslated = 0x00020000

// Translated reports whether a kinfo_proc p_flag marks a Rosetta process.
func Translated(pflag int32) bool { return pflag&PTranslated != 0 }
