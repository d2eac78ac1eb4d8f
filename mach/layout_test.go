package mach

import (
	"testing"
	"unsafe"
)

// Each layout below is checked against Apple's headers. Line numbers are
// those of the copies cited (counted in the stored file at that commit).
//
// Sizes: every count is sizeof(struct)/sizeof(natural_t), natural_t being
// 32 bits, so a count and a size must agree.

type field struct {
	name string
	got  uintptr
	want uintptr
}

func checkLayout(t *testing.T, what string, size, wantSize uintptr, count, wantCount int, fields []field) {
	t.Helper()
	if size != wantSize {
		t.Errorf("%s: size %d, want %d", what, size, wantSize)
	}
	if count != wantCount {
		t.Errorf("%s: count %d, want %d", what, count, wantCount)
	}
	if uintptr(wantCount)*4 != wantSize {
		t.Errorf("%s: count %d words does not cover %d bytes", what, wantCount, wantSize)
	}
	for _, f := range fields {
		if f.got != f.want {
			t.Errorf("%s.%s: offset %d, want %d", what, f.name, f.got, f.want)
		}
	}
}

// arm_thread_state64_t: apple-oss-distributions/xnu
// osfmk/mach/arm/_structs.h (commit 5c2921b07a24), struct
// __darwin_arm_thread_state64, non-opaque form at lines 168-177:
// __uint64_t __x[29]; __fp; __lr; __sp; __pc; __uint32_t __cpsr; __pad.
// The opaque arm64e form (lines 157-166) has the same layout with void*
// fields. ARM_THREAD_STATE64 = 6 and ARM_THREAD_STATE64_COUNT =
// sizeof/sizeof(uint32_t) in osfmk/mach/arm/thread_status.h.
func TestArmThreadStateLayout(t *testing.T) {
	var s ArmThreadState
	checkLayout(t, "arm_thread_state64_t", unsafe.Sizeof(s), 272, ArmThreadState64Count, 68, []field{
		{"x", unsafe.Offsetof(s.X), 0},
		{"fp", unsafe.Offsetof(s.FP), 232},
		{"lr", unsafe.Offsetof(s.LR), 240},
		{"sp", unsafe.Offsetof(s.SP), 248},
		{"pc", unsafe.Offsetof(s.PC), 256},
		{"cpsr", unsafe.Offsetof(s.CPSR), 264},
		{"pad", unsafe.Offsetof(s.Flags), 268},
	})
	if ArmThreadState64 != 6 {
		t.Errorf("ARM_THREAD_STATE64 = %d, want 6", ArmThreadState64)
	}
}

// x86_thread_state64_t: apple/darwin-xnu osfmk/mach/i386/_structs.h,
// struct __darwin_x86_thread_state64 (_STRUCT_X86_THREAD_STATE64): 21
// __uint64_t fields rax, rbx, rcx, rdx, rdi, rsi, rbp, rsp, r8-r15, rip,
// rflags, cs, fs, gs. x86_THREAD_STATE64 = 4 at
// apple-oss-distributions/xnu osfmk/mach/i386/thread_status.h:109 (commit
// aca3beaa3dfb); x86_THREAD_STATE64_COUNT = sizeof/sizeof(int) in the
// same file.
func TestX86ThreadStateLayout(t *testing.T) {
	var s X86ThreadState
	checkLayout(t, "x86_thread_state64_t", unsafe.Sizeof(s), 168, X86ThreadState64Count, 42, []field{
		{"rax", unsafe.Offsetof(s.RAX), 0},
		{"rbx", unsafe.Offsetof(s.RBX), 8},
		{"rcx", unsafe.Offsetof(s.RCX), 16},
		{"rdx", unsafe.Offsetof(s.RDX), 24},
		{"rdi", unsafe.Offsetof(s.RDI), 32},
		{"rsi", unsafe.Offsetof(s.RSI), 40},
		{"rbp", unsafe.Offsetof(s.RBP), 48},
		{"rsp", unsafe.Offsetof(s.RSP), 56},
		{"r8", unsafe.Offsetof(s.R8), 64},
		{"r15", unsafe.Offsetof(s.R15), 120},
		{"rip", unsafe.Offsetof(s.RIP), 128},
		{"rflags", unsafe.Offsetof(s.RFLAGS), 136},
		{"cs", unsafe.Offsetof(s.CS), 144},
		{"fs", unsafe.Offsetof(s.FS), 152},
		{"gs", unsafe.Offsetof(s.GS), 160},
	})
	if X86ThreadState64 != 4 {
		t.Errorf("x86_THREAD_STATE64 = %d, want 4", X86ThreadState64)
	}
}

// thread_basic_info: osfmk/mach/thread_info.h, struct at line 91,
// THREAD_BASIC_INFO = 3 at line 89 (ProjectCalamari/xnu mirror of xnu,
// commit a430cb1893d0; the same struct is in apple/darwin-xnu).
// time_value_t is {integer_t seconds; integer_t microseconds}
// (osfmk/mach/time_value.h).
func TestThreadBasicInfoLayout(t *testing.T) {
	var s ThreadBasicInfoData
	checkLayout(t, "thread_basic_info", unsafe.Sizeof(s), 40, ThreadBasicInfoCount, 10, []field{
		{"user_time", unsafe.Offsetof(s.UserTime), 0},
		{"system_time", unsafe.Offsetof(s.SystemTime), 8},
		{"cpu_usage", unsafe.Offsetof(s.CPUUsage), 16},
		{"policy", unsafe.Offsetof(s.Policy), 20},
		{"run_state", unsafe.Offsetof(s.RunState), 24},
		{"flags", unsafe.Offsetof(s.Flags), 28},
		{"suspend_count", unsafe.Offsetof(s.SuspendCount), 32},
		{"sleep_time", unsafe.Offsetof(s.SleepTime), 36},
	})
	var tv TimeValue
	if unsafe.Sizeof(tv) != 8 || unsafe.Offsetof(tv.Microseconds) != 4 {
		t.Errorf("time_value_t: size %d, microseconds at %d; want 8, 4", unsafe.Sizeof(tv), unsafe.Offsetof(tv.Microseconds))
	}
	if ThreadBasicInfo != 3 || THStateRunning != 1 || THStateWaiting != 3 {
		t.Error("THREAD_BASIC_INFO or TH_STATE_* constants differ from thread_info.h")
	}
}

// thread_identifier_info: osfmk/mach/thread_info.h line 111 (same copy),
// THREAD_IDENTIFIER_INFO = 4 at line 109.
func TestThreadIdentifierInfoLayout(t *testing.T) {
	var s ThreadIdentifierInfoData
	checkLayout(t, "thread_identifier_info", unsafe.Sizeof(s), 24, ThreadIdentifierInfoCount, 6, []field{
		{"thread_id", unsafe.Offsetof(s.ThreadID), 0},
		{"thread_handle", unsafe.Offsetof(s.ThreadHandle), 8},
		{"dispatch_qaddr", unsafe.Offsetof(s.DispatchQAddr), 16},
	})
	if ThreadIdentifierInfo != 4 {
		t.Errorf("THREAD_IDENTIFIER_INFO = %d, want 4", ThreadIdentifierInfo)
	}
}

// thread_extended_info: osfmk/mach/thread_info.h line 157 (same copy),
// THREAD_EXTENDED_INFO = 5 at line 155, MAXTHREADNAMESIZE = 64 at line 156.
func TestThreadExtendedInfoLayout(t *testing.T) {
	var s ThreadExtendedInfoData
	checkLayout(t, "thread_extended_info", unsafe.Sizeof(s), 112, ThreadExtendedInfoCount, 28, []field{
		{"pth_user_time", unsafe.Offsetof(s.UserTime), 0},
		{"pth_system_time", unsafe.Offsetof(s.SystemTime), 8},
		{"pth_cpu_usage", unsafe.Offsetof(s.CPUUsage), 16},
		{"pth_policy", unsafe.Offsetof(s.Policy), 20},
		{"pth_run_state", unsafe.Offsetof(s.RunState), 24},
		{"pth_flags", unsafe.Offsetof(s.Flags), 28},
		{"pth_sleep_time", unsafe.Offsetof(s.SleepTime), 32},
		{"pth_curpri", unsafe.Offsetof(s.CurPri), 36},
		{"pth_priority", unsafe.Offsetof(s.Priority), 40},
		{"pth_maxpriority", unsafe.Offsetof(s.MaxPriority), 44},
		{"pth_name", unsafe.Offsetof(s.Name), 48},
	})
	if ThreadExtendedInfo != 5 || MaxThreadNameSize != 64 {
		t.Error("THREAD_EXTENDED_INFO or MAXTHREADNAMESIZE differ from thread_info.h")
	}
}

// task_dyld_info: apple-oss-distributions/xnu osfmk/mach/task_info.h
// (commit 1031c584a5e3), struct at line 281 inside #pragma pack(push, 4)
// (line 91), TASK_DYLD_INFO = 17 at line 279, TASK_DYLD_ALL_IMAGE_INFO_64
// = 1 at line 291. Packed, the C struct is 20 bytes: the count is 5. The
// Go type has 4 bytes of tail padding the kernel never writes.
func TestTaskDyldInfoLayout(t *testing.T) {
	var s TaskDyldInfoData
	const cSize = 20
	checkLayout(t, "task_dyld_info", cSize, 20, TaskDyldInfoCount, 5, []field{
		{"all_image_info_addr", unsafe.Offsetof(s.AllImageInfoAddr), 0},
		{"all_image_info_size", unsafe.Offsetof(s.AllImageInfoSize), 8},
		{"all_image_info_format", unsafe.Offsetof(s.AllImageInfoFormat), 16},
	})
	if unsafe.Sizeof(s) < cSize {
		t.Errorf("Go task_dyld_info is %d bytes, smaller than the %d the kernel writes", unsafe.Sizeof(s), cSize)
	}
	if TaskDyldInfo != 17 || TaskDyldAllImageInfo64 != 1 {
		t.Error("TASK_DYLD_INFO constants differ from task_info.h")
	}
}

// vm_region_basic_info_64: xnu osfmk/mach/vm_region.h (installed as
// <mach/vm_region.h>; the stored preprocessed MacOSX10.7.sdk copy shows the
// struct after its #pragma pack(4)):
// vm_prot_t protection, max_protection; vm_inherit_t inheritance;
// boolean_t shared, reserved; memory_object_offset_t offset (at 20,
// unaligned); vm_behavior_t behavior; unsigned short user_wired_count;
// 36 bytes, VM_REGION_BASIC_INFO_COUNT_64 = 9, VM_REGION_BASIC_INFO_64 = 9.
func TestVMRegionBasicInfo64Layout(t *testing.T) {
	var s VMRegionBasicInfo64Data
	checkLayout(t, "vm_region_basic_info_64", unsafe.Sizeof(s), 36, VMRegionBasicInfoCount64, 9, []field{
		{"protection", unsafe.Offsetof(s.Protection), 0},
		{"max_protection", unsafe.Offsetof(s.MaxProtection), 4},
		{"inheritance", unsafe.Offsetof(s.Inheritance), 8},
		{"shared", unsafe.Offsetof(s.Shared), 12},
		{"reserved", unsafe.Offsetof(s.Reserved), 16},
		{"offset", unsafe.Offsetof(s.OffsetWords), 20},
		{"behavior", unsafe.Offsetof(s.Behavior), 28},
		{"user_wired_count", unsafe.Offsetof(s.UserWiredCount), 32},
	})
	s.OffsetWords = [2]uint32{0x89abcdef, 0x01234567}
	if got := s.Offset(); got != 0x0123456789abcdef {
		t.Errorf("Offset() = %#x", got)
	}
}
