package machtest

import (
	"time"

	"github.com/macprof/macprof/mach"
)

// ThreadSuspend follows osfmk/kern/thread_act.c thread_suspend: it raises
// the thread's user_stop_count, an unowned count that nothing lowers if
// the caller dies; KERN_TERMINATED for a thread no longer active.
func (k *Kernel) ThreadSuspend(thread uint32) mach.KernReturn {
	k.enter(CallThreadSuspend)
	defer k.mu.Unlock()
	th, kr := k.activeThread(thread)
	if kr != mach.KernSuccess {
		return kr
	}
	th.UserStop++
	return mach.KernSuccess
}

// ThreadResume follows osfmk/kern/thread_act.c thread_resume: KERN_FAILURE
// when the count is already zero, KERN_TERMINATED for a thread no longer
// active (its count is then never lowered).
func (k *Kernel) ThreadResume(thread uint32) mach.KernReturn {
	k.enter(CallThreadResume)
	defer k.mu.Unlock()
	th, kr := k.activeThread(thread)
	if kr != mach.KernSuccess {
		return kr
	}
	if th.UserStop == 0 {
		return mach.KernFailure
	}
	th.UserStop--
	return mach.KernSuccess
}

// ThreadGetState follows osfmk/kern/thread_act.c thread_get_state_internal
// (KERN_TERMINATED for a thread no longer active) and the machine layer:
// osfmk/arm64/status.c machine_thread_get_state answers an x86 flavor with
// KERN_INVALID_ARGUMENT ("default: return KERN_INVALID_ARGUMENT"), for a
// Rosetta thread too when the caller is native arm64, and serves
// ARM_THREAD_STATE64 for every 64-bit thread, a Rosetta thread included
// (only "if (!thread_is_64bit_data(thread))" refuses): the registers of
// the translated code Rosetta runs, not the x86_64 program's. A caller
// that is itself translated has its x86_THREAD_STATE64 served by Rosetta
// (whose source Apple does not publish: modelled as the x86_64 state),
// and an Intel kernel (osfmk/i386/pcb.c machine_thread_get_state) refuses
// arm64 flavors. The state is the thread's current frame: its registers as
// the stack it is on left them.
func (k *Kernel) ThreadGetState(thread, flavor uint32, state []uint32) (uint32, mach.KernReturn) {
	k.enter(CallThreadGetState)
	defer k.mu.Unlock()
	th, kr := k.activeThread(thread)
	if kr != mach.KernSuccess {
		return 0, kr
	}
	hostARM := k.GOARCHValue == "arm64" || k.ProfilerTranslated
	x86 := th.task.Translated || !hostARM
	switch flavor {
	case mach.ArmThreadState64:
		if !hostARM {
			return 0, mach.KernInvalidArgument
		}
		if len(state) < mach.ArmThreadState64Count {
			return 0, mach.KernInvalidArgument
		}
		if th.task.Translated {
			// Which arm64 registers hold which x86_64 ones inside
			// Rosetta is not published: the model gives the state of
			// its runtime, a PC outside every image of the program and
			// no frame chain, so that a backend that reads this flavor
			// of a translated thread names none of its frames.
			clear(state[:mach.ArmThreadState64Count])
			put64(state[62:], th.regs().SP)
			put64(state[64:], RosettaRuntimePC)
			return mach.ArmThreadState64Count, mach.KernSuccess
		}
		// osfmk/arm64/status.c machine_thread_get_state, case
		// ARM_THREAD_STATE64 (lines 1254-1266 at xnu-11417.101.15):
		// handle_get_arm64_thread_state (194-209) copies the user
		// saved state, thread->machine.upcb, with
		// saved_state_to_thread_state64 (97-113). The words are
		// struct __darwin_arm_thread_state64 (osfmk/mach/arm/_structs.h
		// 180-189): x0-x28 in words 0-57, then fp (x29) at 58, lr (x30)
		// at 60, sp at 62, pc at 64. The model keeps only these four
		// (its other registers read as zero): the interrupted
		// instruction's, as its stack left them.
		clear(state[:mach.ArmThreadState64Count])
		r := th.regs()
		put64(state[58:], r.FP)
		put64(state[60:], r.LR)
		put64(state[62:], r.SP)
		put64(state[64:], r.PC)
		return mach.ArmThreadState64Count, mach.KernSuccess
	case mach.X86ThreadState64:
		if !x86 || (hostARM && !k.ProfilerTranslated) {
			return 0, mach.KernInvalidArgument
		}
		if len(state) < mach.X86ThreadState64Count {
			return 0, mach.KernInvalidArgument
		}
		// osfmk/i386/pcb.c machine_thread_get_state, case
		// x86_THREAD_STATE64 (lines 1580-1594 at xnu-11417.101.15):
		// get_thread_state64 (804-850) copies the user saved state,
		// USER_REGS64(thread) (osfmk/i386/thread.h 166): rbp from
		// saved_state->rbp, rsp and rip from the interrupt frame
		// (isf.rsp, isf.rip). The words are struct
		// __darwin_x86_thread_state64 (osfmk/mach/i386/_structs.h
		// 714-738): rax, rbx, rcx, rdx, rdi, rsi in words 0-11, rbp
		// at 12, rsp at 14, r8-r15 in 16-31, rip at 32. The model
		// keeps only rbp, rsp and rip (its other registers read as
		// zero): the interrupted instruction's, as its stack left
		// them.
		clear(state[:mach.X86ThreadState64Count])
		r := th.regs()
		put64(state[12:], r.FP) // rbp
		put64(state[14:], r.SP) // rsp
		put64(state[32:], r.PC) // rip
		return mach.X86ThreadState64Count, mach.KernSuccess
	}
	return 0, mach.KernInvalidArgument
}

// ThreadInfo follows osfmk/kern/thread_act.c thread_info (KERN_TERMINATED
// unless active) and osfmk/kern/thread.c thread_info_internal for
// THREAD_BASIC_INFO, THREAD_IDENTIFIER_INFO and THREAD_EXTENDED_INFO.
func (k *Kernel) ThreadInfo(thread, flavor uint32, info []uint32) (uint32, mach.KernReturn) {
	k.enter(CallThreadInfo)
	defer k.mu.Unlock()
	th, kr := k.activeThread(thread)
	if kr != mach.KernSuccess {
		return 0, kr
	}
	cpu := th.cpu
	switch flavor {
	case mach.ThreadBasicInfo:
		if len(info) < mach.ThreadBasicInfoCount {
			return 0, mach.KernInvalidArgument
		}
		clear(info[:mach.ThreadBasicInfoCount])
		info[0] = uint32(cpu / time.Second)
		info[1] = uint32(cpu % time.Second / time.Microsecond)
		run := uint32(mach.THStateWaiting)
		if th.Busy && th.runnable() {
			run = mach.THStateRunning
		} else if !th.runnable() {
			run = mach.THStateStopped
		}
		info[6] = run
		info[8] = uint32(th.UserStop)
		return mach.ThreadBasicInfoCount, mach.KernSuccess
	case mach.ThreadIdentifierInfo:
		if len(info) < mach.ThreadIdentifierInfoCount {
			return 0, mach.KernInvalidArgument
		}
		clear(info[:mach.ThreadIdentifierInfoCount])
		put64(info[0:], th.ID)
		return mach.ThreadIdentifierInfoCount, mach.KernSuccess
	case mach.ThreadExtendedInfo:
		if len(info) < mach.ThreadExtendedInfoCount {
			return 0, mach.KernInvalidArgument
		}
		clear(info[:mach.ThreadExtendedInfoCount])
		put64(info[0:], uint64(cpu))
		var name [mach.MaxThreadNameSize]byte
		copy(name[:mach.MaxThreadNameSize-1], th.Name)
		for i := 0; i < mach.MaxThreadNameSize/4; i++ {
			info[12+i] = uint32(name[4*i]) | uint32(name[4*i+1])<<8 | uint32(name[4*i+2])<<16 | uint32(name[4*i+3])<<24
		}
		return mach.ThreadExtendedInfoCount, mach.KernSuccess
	}
	return 0, mach.KernInvalidArgument
}
