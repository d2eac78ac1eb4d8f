package images

import (
	"testing"
	"unsafe"
)

// The 64-bit structs of dyld's include/mach-o/dyld_images.h, as released in
// dyld-750.6 (mirrored at github.com/dishibolei/dyld-750.6_analyse and
// github.com/RetVal/objc-runtime, include/mach-o/dyld_images.h):
// struct dyld_image_info at lines 69-75, struct dyld_uuid_info at 77-80,
// struct dyld_all_image_infos at 95-140. Pointers, uintptr_t and enum-sized
// fields are 8 bytes in a 64-bit (LP64) process; bool is one byte;
// mach_port_t is 4; DYLD_MAX_PROCESS_INFO_NOTIFY_COUNT is 8 (line 93), so
// reserved has 13-8/2 = 9 entries under __LP64__ (line 136). Go lays these
// mirrors out with C's alignment rules on every 64-bit GOARCH, so the
// offsets below are the header's.
type cDyldImageInfo struct {
	imageLoadAddress uint64 // const struct mach_header*
	imageFilePath    uint64 // const char*
	imageFileModDate uint64 // uintptr_t
}

type cDyldUUIDInfo struct {
	imageLoadAddress uint64
	imageUUID        [16]byte
}

type cDyldAllImageInfos struct {
	version                         uint32
	infoArrayCount                  uint32
	infoArray                       uint64
	notification                    uint64
	processDetachedFromSharedRegion bool
	libSystemInitialized            bool // version 2
	dyldImageLoadAddress            uint64
	jitInfo                         uint64 // version 3
	dyldVersion                     uint64 // version 5
	errorMessage                    uint64
	terminationFlags                uint64
	coreSymbolicationShmPage        uint64 // version 6
	systemOrderFlag                 uint64 // version 7
	uuidArrayCount                  uint64 // version 8
	uuidArray                       uint64
	dyldAllImageInfosAddress        uint64 // version 9
	initialImageCount               uint64 // version 10
	errorKind                       uint64 // version 11
	errorClientOfDylibPath          uint64
	errorTargetDylibPath            uint64
	errorSymbol                     uint64
	sharedCacheSlide                uint64   // version 12
	sharedCacheUUID                 [16]byte // version 13
	sharedCacheBaseAddress          uint64   // version 15
	infoArrayChangeTimestamp        uint64
	dyldPath                        uint64
	notifyPorts                     [8]uint32
	reserved                        [13 - 8/2]uint64
}

func TestDyldLayout(t *testing.T) {
	var a cDyldAllImageInfos
	check := func(name string, got uintptr, want int) {
		t.Helper()
		if int(got) != want {
			t.Errorf("%s: header layout gives %d, macprof uses %d", name, got, want)
		}
	}
	check("sizeof(dyld_image_info)", unsafe.Sizeof(cDyldImageInfo{}), DyldImageInfoSize)
	check("dyld_image_info.imageLoadAddress", unsafe.Offsetof(cDyldImageInfo{}.imageLoadAddress), 0)
	check("imageFilePath", unsafe.Offsetof(cDyldImageInfo{}.imageFilePath), 8)
	check("imageFileModDate", unsafe.Offsetof(cDyldImageInfo{}.imageFileModDate), 16)
	check("sizeof(dyld_uuid_info)", unsafe.Sizeof(cDyldUUIDInfo{}), DyldUUIDInfoSize)
	check("dyld_uuid_info.imageLoadAddress", unsafe.Offsetof(cDyldUUIDInfo{}.imageLoadAddress), 0)
	check("imageUUID", unsafe.Offsetof(cDyldUUIDInfo{}.imageUUID), 8)
	check("sizeof(dyld_all_image_infos)", unsafe.Sizeof(a), DyldAllImageInfosSize)
	for _, f := range []struct {
		name string
		got  uintptr
		want int
	}{
		{"version", unsafe.Offsetof(a.version), dyldOffVersion},
		{"infoArrayCount", unsafe.Offsetof(a.infoArrayCount), dyldOffInfoArrayCount},
		{"infoArray", unsafe.Offsetof(a.infoArray), dyldOffInfoArray},
		{"notification", unsafe.Offsetof(a.notification), dyldOffNotification},
		{"processDetachedFromSharedRegion", unsafe.Offsetof(a.processDetachedFromSharedRegion), dyldOffProcessDetached},
		{"libSystemInitialized", unsafe.Offsetof(a.libSystemInitialized), dyldOffLibSystemInitialized},
		{"dyldImageLoadAddress", unsafe.Offsetof(a.dyldImageLoadAddress), dyldOffDyldImageLoadAddress},
		{"jitInfo", unsafe.Offsetof(a.jitInfo), dyldOffJitInfo},
		{"dyldVersion", unsafe.Offsetof(a.dyldVersion), dyldOffDyldVersion},
		{"errorMessage", unsafe.Offsetof(a.errorMessage), dyldOffErrorMessage},
		{"terminationFlags", unsafe.Offsetof(a.terminationFlags), dyldOffTerminationFlags},
		{"coreSymbolicationShmPage", unsafe.Offsetof(a.coreSymbolicationShmPage), dyldOffCoreSymbolicationShmPage},
		{"systemOrderFlag", unsafe.Offsetof(a.systemOrderFlag), dyldOffSystemOrderFlag},
		{"uuidArrayCount", unsafe.Offsetof(a.uuidArrayCount), dyldOffUUIDArrayCount},
		{"uuidArray", unsafe.Offsetof(a.uuidArray), dyldOffUUIDArray},
		{"dyldAllImageInfosAddress", unsafe.Offsetof(a.dyldAllImageInfosAddress), dyldOffDyldAllImageInfosAddress},
		{"initialImageCount", unsafe.Offsetof(a.initialImageCount), dyldOffInitialImageCount},
		{"errorKind", unsafe.Offsetof(a.errorKind), dyldOffErrorKind},
		// Not decoded, but they place sharedCacheSlide.
		{"errorClientOfDylibPath", unsafe.Offsetof(a.errorClientOfDylibPath), 128},
		{"errorTargetDylibPath", unsafe.Offsetof(a.errorTargetDylibPath), 136},
		{"errorSymbol", unsafe.Offsetof(a.errorSymbol), 144},
		{"sharedCacheSlide", unsafe.Offsetof(a.sharedCacheSlide), dyldOffSharedCacheSlide},
		{"sharedCacheUUID", unsafe.Offsetof(a.sharedCacheUUID), dyldOffSharedCacheUUID},
		{"sharedCacheBaseAddress", unsafe.Offsetof(a.sharedCacheBaseAddress), dyldOffSharedCacheBaseAddress},
		{"infoArrayChangeTimestamp", unsafe.Offsetof(a.infoArrayChangeTimestamp), dyldOffInfoArrayChangeTimestamp},
		{"dyldPath", unsafe.Offsetof(a.dyldPath), dyldOffDyldPath},
		{"notifyPorts", unsafe.Offsetof(a.notifyPorts), dyldOffNotifyPorts},
		{"reserved", unsafe.Offsetof(a.reserved), dyldOffReserved},
	} {
		check(f.name, f.got, f.want)
	}
	// Each version reads exactly through its last field.
	for v, want := range map[uint32]int{1: 25, 2: 40, 7: 40, 8: 104, 9: 112, 10: 120, 11: 152, 12: 160, 13: 176, 14: 176, 15: 200, 17: 200} {
		if got := dyldInfosLen(v); got != want {
			t.Errorf("version %d reads %d bytes, want %d", v, got, want)
		}
	}
}
