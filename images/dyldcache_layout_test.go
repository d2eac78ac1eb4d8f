package images

import (
	"testing"
	"unsafe"
)

// The structs of dyld-1378 include/mach-o/dyld_cache_format.h that
// images/dyldcache.go reads: struct dyld_cache_header (lines 32-116; the
// bitfield after platform is one uint32_t), struct dyld_cache_mapping_info
// (122-128), struct dyld_cache_local_symbols_info (551-559) and struct
// dyld_cache_local_symbols_entry / _entry_64 (561-573). Go lays these
// mirrors out with C's alignment rules, so the offsets below are the
// header's.
type cDyldCacheHeader struct {
	magic               [16]byte
	mappingOffset       uint32
	mappingCount        uint32
	imagesOffsetOld     uint32
	imagesCountOld      uint32
	_                   uint64 // dyldBaseAddress
	_                   uint64 // codeSignatureOffset
	_                   uint64 // codeSignatureSize
	_                   uint64 // slideInfoOffsetUnused
	_                   uint64 // slideInfoSizeUnused
	localSymbolsOffset  uint64
	localSymbolsSize    uint64
	uuid                [16]byte
	_                   uint64 // cacheType
	_                   uint32 // branchPoolsOffset
	_                   uint32 // branchPoolsCount
	_                   uint64 // dyldInCacheMH
	_                   uint64 // dyldInCacheEntry
	_                   uint64 // imagesTextOffset
	_                   uint64 // imagesTextCount
	_                   uint64 // patchInfoAddr
	_                   uint64 // patchInfoSize
	_                   uint64 // otherImageGroupAddrUnused
	_                   uint64 // otherImageGroupSizeUnused
	_                   uint64 // progClosuresAddr
	_                   uint64 // progClosuresSize
	_                   uint64 // progClosuresTrieAddr
	_                   uint64 // progClosuresTrieSize
	_                   uint32 // platform
	_                   uint32 // bitfield formatVersion:8 ... padding:19
	sharedRegionStart   uint64
	_                   uint64 // sharedRegionSize
	_                   uint64 // maxSlide
	_                   uint64 // dylibsImageArrayAddr
	_                   uint64 // dylibsImageArraySize
	_                   uint64 // dylibsTrieAddr
	_                   uint64 // dylibsTrieSize
	_                   uint64 // otherImageArrayAddr
	_                   uint64 // otherImageArraySize
	_                   uint64 // otherTrieAddr
	_                   uint64 // otherTrieSize
	_                   uint32 // mappingWithSlideOffset
	_                   uint32 // mappingWithSlideCount
	_                   uint64 // dylibsPBLStateArrayAddrUnused
	_                   uint64 // dylibsPBLSetAddr
	_                   uint64 // programsPBLSetPoolAddr
	_                   uint64 // programsPBLSetPoolSize
	_                   uint64 // programTrieAddr
	_                   uint32 // programTrieSize
	_                   uint32 // osVersion
	_                   uint32 // altPlatform
	_                   uint32 // altOsVersion
	_                   uint64 // swiftOptsOffset
	_                   uint64 // swiftOptsSize
	subCacheArrayOffset uint32
	subCacheArrayCount  uint32
	symbolFileUUID      [16]byte
	_                   uint64 // rosettaReadOnlyAddr
	_                   uint64 // rosettaReadOnlySize
	_                   uint64 // rosettaReadWriteAddr
	_                   uint64 // rosettaReadWriteSize
	imagesOffset        uint32
	imagesCount         uint32
	cacheSubType        uint32
}

// struct dyld_cache_image_info (lines 157-164), struct
// dyld_subcache_entry_v1 (575-579) and struct dyld_subcache_entry
// (581-586).
type cDyldCacheImageInfo struct {
	address        uint64
	_              uint64 // modTime
	_              uint64 // inode
	pathFileOffset uint32
	_              uint32 // pad
}

type cDyldSubCacheEntryV1 struct {
	_ [16]byte // uuid
	_ uint64   // cacheVMOffset
}

type cDyldSubCacheEntry struct {
	_             [16]byte // uuid
	cacheVMOffset uint64
	fileSuffix    [32]byte
}

type cDyldCacheMappingInfo struct {
	address    uint64
	size       uint64
	fileOffset uint64
	_          uint32 // maxProt
	_          uint32 // initProt
}

type cDyldCacheLocalSymbolsInfo struct {
	nlistOffset   uint32
	nlistCount    uint32
	stringsOffset uint32
	stringsSize   uint32
	entriesOffset uint32
	entriesCount  uint32
}

type cDyldCacheLocalSymbolsEntry struct {
	dylibOffset     uint32
	nlistStartIndex uint32
	nlistCount      uint32
}

type cDyldCacheLocalSymbolsEntry64 struct {
	dylibOffset     uint64
	nlistStartIndex uint32
	nlistCount      uint32
}

func TestDyldCacheLayout(t *testing.T) {
	var h cDyldCacheHeader
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"magic", unsafe.Offsetof(h.magic), dcOffMagic},
		{"mappingOffset", unsafe.Offsetof(h.mappingOffset), dcOffMappingOffset},
		{"mappingCount", unsafe.Offsetof(h.mappingCount), dcOffMappingCount},
		{"localSymbolsOffset", unsafe.Offsetof(h.localSymbolsOffset), dcOffLocalSymbolsOffset},
		{"localSymbolsSize", unsafe.Offsetof(h.localSymbolsSize), dcOffLocalSymbolsSize},
		{"uuid", unsafe.Offsetof(h.uuid), dcOffUUID},
		{"sharedRegionStart", unsafe.Offsetof(h.sharedRegionStart), 224}, // dyldcachetest writes it
		{"symbolFileUUID", unsafe.Offsetof(h.symbolFileUUID), dcOffSymbolFileUUID},
		{"imagesOffsetOld", unsafe.Offsetof(h.imagesOffsetOld), dcOffImagesOffsetOld},
		{"imagesCountOld", unsafe.Offsetof(h.imagesCountOld), dcOffImagesCountOld},
		{"subCacheArrayOffset", unsafe.Offsetof(h.subCacheArrayOffset), dcOffSubCacheArrayOffset},
		{"subCacheArrayCount", unsafe.Offsetof(h.subCacheArrayCount), dcOffSubCacheArrayCount},
		{"imagesOffset", unsafe.Offsetof(h.imagesOffset), dcOffImagesOffset},
		{"imagesCount", unsafe.Offsetof(h.imagesCount), dcOffImagesCount},
		{"cacheSubType", unsafe.Offsetof(h.cacheSubType), dcOffCacheSubType},
		{"dyld_cache_mapping_info.address", unsafe.Offsetof(cDyldCacheMappingInfo{}.address), 0},
		{"dyld_cache_mapping_info.size", unsafe.Offsetof(cDyldCacheMappingInfo{}.size), 8},
		{"dyld_cache_mapping_info.fileOffset", unsafe.Offsetof(cDyldCacheMappingInfo{}.fileOffset), 16},
		{"dyld_cache_image_info.address", unsafe.Offsetof(cDyldCacheImageInfo{}.address), 0},
		{"dyld_cache_image_info.pathFileOffset", unsafe.Offsetof(cDyldCacheImageInfo{}.pathFileOffset), 24},
		{"sizeof(dyld_cache_image_info)", unsafe.Sizeof(cDyldCacheImageInfo{}), dcImageInfoSize},
		{"dyld_subcache_entry.cacheVMOffset", unsafe.Offsetof(cDyldSubCacheEntry{}.cacheVMOffset), 16},
		{"dyld_subcache_entry.fileSuffix", unsafe.Offsetof(cDyldSubCacheEntry{}.fileSuffix), 24},
		{"sizeof(dyld_subcache_entry)", unsafe.Sizeof(cDyldSubCacheEntry{}), dcSubCacheEntryV2},
		{"sizeof(dyld_subcache_entry_v1)", unsafe.Sizeof(cDyldSubCacheEntryV1{}), dcSubCacheEntryV1},
		{"nlistOffset", unsafe.Offsetof(cDyldCacheLocalSymbolsInfo{}.nlistOffset), 0},
		{"nlistCount", unsafe.Offsetof(cDyldCacheLocalSymbolsInfo{}.nlistCount), 4},
		{"stringsOffset", unsafe.Offsetof(cDyldCacheLocalSymbolsInfo{}.stringsOffset), 8},
		{"stringsSize", unsafe.Offsetof(cDyldCacheLocalSymbolsInfo{}.stringsSize), 12},
		{"entriesOffset", unsafe.Offsetof(cDyldCacheLocalSymbolsInfo{}.entriesOffset), 16},
		{"entriesCount", unsafe.Offsetof(cDyldCacheLocalSymbolsInfo{}.entriesCount), 20},
		{"entry.dylibOffset", unsafe.Offsetof(cDyldCacheLocalSymbolsEntry{}.dylibOffset), 0},
		{"entry.nlistStartIndex", unsafe.Offsetof(cDyldCacheLocalSymbolsEntry{}.nlistStartIndex), 4},
		{"entry.nlistCount", unsafe.Offsetof(cDyldCacheLocalSymbolsEntry{}.nlistCount), 8},
		{"entry_64.dylibOffset", unsafe.Offsetof(cDyldCacheLocalSymbolsEntry64{}.dylibOffset), 0},
		{"entry_64.nlistStartIndex", unsafe.Offsetof(cDyldCacheLocalSymbolsEntry64{}.nlistStartIndex), 8},
		{"entry_64.nlistCount", unsafe.Offsetof(cDyldCacheLocalSymbolsEntry64{}.nlistCount), 12},
		{"sizeof(dyld_cache_mapping_info)", unsafe.Sizeof(cDyldCacheMappingInfo{}), dcMappingInfoSize},
		{"sizeof(dyld_cache_local_symbols_info)", unsafe.Sizeof(cDyldCacheLocalSymbolsInfo{}), dcLocalSymbolsInfoSize},
		{"sizeof(dyld_cache_local_symbols_entry)", unsafe.Sizeof(cDyldCacheLocalSymbolsEntry{}), dcLocalSymbolsEntrySize},
		{"sizeof(dyld_cache_local_symbols_entry_64)", unsafe.Sizeof(cDyldCacheLocalSymbolsEntry64{}), dcLocalSymbolsEntry64},
	} {
		if c.got != c.want {
			t.Errorf("%s: offset/size %d, images uses %d", c.name, c.got, c.want)
		}
	}
}
