package mach

import (
	"time"

	"github.com/macprof/macprof/unwind"
)

// The C structs the kernel fills, mirrored field for field. Each one's
// size, offsets and count are asserted in layout_test.go against Apple's
// headers; the types are portable so that those tests run on Linux.

// Thread state flavors and counts (in 32-bit words) for thread_get_state.
const (
	// ArmThreadState64 is ARM_THREAD_STATE64.
	ArmThreadState64 = 6
	// ArmThreadState64Count is ARM_THREAD_STATE64_COUNT.
	ArmThreadState64Count = 68
	// X86ThreadState64 is x86_THREAD_STATE64.
	X86ThreadState64 = 4
	// X86ThreadState64Count is x86_THREAD_STATE64_COUNT.
	X86ThreadState64Count = 42
)

// thread_info flavors and counts.
const (
	// ThreadBasicInfo is THREAD_BASIC_INFO.
	ThreadBasicInfo = 3
	// ThreadBasicInfoCount is THREAD_BASIC_INFO_COUNT.
	ThreadBasicInfoCount = 10
	// ThreadIdentifierInfo is THREAD_IDENTIFIER_INFO.
	ThreadIdentifierInfo = 4
	// ThreadIdentifierInfoCount is THREAD_IDENTIFIER_INFO_COUNT.
	ThreadIdentifierInfoCount = 6
	// ThreadExtendedInfo is THREAD_EXTENDED_INFO.
	ThreadExtendedInfo = 5
	// ThreadExtendedInfoCount is THREAD_EXTENDED_INFO_COUNT.
	ThreadExtendedInfoCount = 28
	// MaxThreadNameSize is MAXTHREADNAMESIZE, the size of pth_name.
	MaxThreadNameSize = 64
)

// Thread run states (thread_basic_info.run_state).
const (
	THStateRunning         = 1 // TH_STATE_RUNNING
	THStateStopped         = 2 // TH_STATE_STOPPED
	THStateWaiting         = 3 // TH_STATE_WAITING
	THStateUninterruptible = 4 // TH_STATE_UNINTERRUPTIBLE
	THStateHalted          = 5 // TH_STATE_HALTED
)

// task_info flavors and counts.
const (
	// TaskDyldInfo is TASK_DYLD_INFO.
	TaskDyldInfo = 17
	// TaskDyldInfoCount is TASK_DYLD_INFO_COUNT.
	TaskDyldInfoCount = 5
	// TaskDyldAllImageInfo64 is the all_image_info_format of a 64-bit task.
	TaskDyldAllImageInfo64 = 1
)

// mach_vm_region flavor and count.
const (
	// VMRegionBasicInfo64 is VM_REGION_BASIC_INFO_64.
	VMRegionBasicInfo64 = 9
	// VMRegionBasicInfoCount64 is VM_REGION_BASIC_INFO_COUNT_64.
	VMRegionBasicInfoCount64 = 9
)

// Memory protection bits (vm_prot_t).
const (
	VMProtRead    = 1
	VMProtWrite   = 2
	VMProtExecute = 4
)

// ArmThreadState is arm_thread_state64_t (ARM_THREAD_STATE64).
type ArmThreadState struct {
	X     [29]uint64
	FP    uint64 // x29
	LR    uint64 // x30
	SP    uint64
	PC    uint64
	CPSR  uint32
	Flags uint32 // __pad, or __opaque_flags on arm64e
}

// Regs returns the registers a walk starts from, with pointer
// authentication bits stripped by mask (see AddrMask). On arm64e the kernel
// may hand out signed pc, lr, sp and fp; user addresses never have bits
// above the mask set, so masking all four is safe. A zero mask means no
// stripping.
func (s *ArmThreadState) Regs(mask uint64) unwind.Regs {
	if mask == 0 {
		mask = ^uint64(0)
	}
	return unwind.Regs{PC: s.PC & mask, SP: s.SP & mask, FP: s.FP & mask, LR: s.LR & mask}
}

// X86ThreadState is x86_thread_state64_t (x86_THREAD_STATE64).
type X86ThreadState struct {
	RAX, RBX, RCX, RDX, RDI, RSI, RBP, RSP uint64
	R8, R9, R10, R11, R12, R13, R14, R15   uint64
	RIP, RFLAGS, CS, FS, GS                uint64
}

// Regs returns the registers a walk starts from.
func (s *X86ThreadState) Regs() unwind.Regs {
	return unwind.Regs{PC: s.RIP, SP: s.RSP, FP: s.RBP}
}

// TimeValue is time_value_t.
type TimeValue struct {
	Seconds      int32
	Microseconds int32
}

// Duration converts t; negative or out-of-range parts count as zero.
func (t TimeValue) Duration() time.Duration {
	var d time.Duration
	if t.Seconds > 0 {
		d += time.Duration(t.Seconds) * time.Second
	}
	if t.Microseconds > 0 && t.Microseconds < 1_000_000 {
		d += time.Duration(t.Microseconds) * time.Microsecond
	}
	return d
}

// ThreadBasicInfoData is struct thread_basic_info.
type ThreadBasicInfoData struct {
	UserTime     TimeValue
	SystemTime   TimeValue
	CPUUsage     int32
	Policy       int32
	RunState     int32
	Flags        int32
	SuspendCount int32
	SleepTime    int32
}

// CPUTime returns the thread's user plus system time.
func (b *ThreadBasicInfoData) CPUTime() time.Duration {
	return b.UserTime.Duration() + b.SystemTime.Duration()
}

// Running reports whether the thread was running (TH_STATE_RUNNING), as
// opposed to waiting, stopped or halted.
func (b *ThreadBasicInfoData) Running() bool { return b.RunState == THStateRunning }

// ThreadIdentifierInfoData is struct thread_identifier_info.
type ThreadIdentifierInfoData struct {
	ThreadID      uint64 // system-wide unique thread id
	ThreadHandle  uint64
	DispatchQAddr uint64
}

// ThreadExtendedInfoData is struct thread_extended_info.
type ThreadExtendedInfoData struct {
	UserTime    uint64 // nanoseconds
	SystemTime  uint64 // nanoseconds
	CPUUsage    int32
	Policy      int32
	RunState    int32
	Flags       int32
	SleepTime   int32
	CurPri      int32
	Priority    int32
	MaxPriority int32
	Name        [MaxThreadNameSize]byte
}

// NameBytes returns pth_name up to its first NUL (all of it when there is
// none: the kernel copies at most MAXTHREADNAMESIZE bytes). The slice
// aliases e.
func (e *ThreadExtendedInfoData) NameBytes() []byte {
	return CString(e.Name[:])
}

// CString returns b up to its first NUL byte, or all of b.
func CString(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// TaskDyldInfoData is struct task_dyld_info. The C struct is declared under
// #pragma pack(4) and is 20 bytes (5 words); the Go type is padded to 24,
// and only the first TaskDyldInfoCount words are filled.
type TaskDyldInfoData struct {
	AllImageInfoAddr   uint64
	AllImageInfoSize   uint64
	AllImageInfoFormat int32
	_                  int32
}

// VMRegionBasicInfo64Data is struct vm_region_basic_info_64, declared under
// #pragma pack(4): its 64-bit offset sits at byte 20 and is kept as two
// words so that the Go layout is the C one.
type VMRegionBasicInfo64Data struct {
	Protection     int32
	MaxProtection  int32
	Inheritance    uint32
	Shared         uint32
	Reserved       uint32
	OffsetWords    [2]uint32
	Behavior       int32
	UserWiredCount uint16
	_              uint16
}

// Offset returns the 64-bit offset field (little-endian, as on every Mac).
func (v *VMRegionBasicInfo64Data) Offset() uint64 {
	return uint64(v.OffsetWords[0]) | uint64(v.OffsetWords[1])<<32
}
