package images

// What the external tests (package images_test, which use internal/fixture,
// a package that imports images) need from inside the package.

// MachOFixture returns the path of a Mach-O test fixture.
var MachOFixture = machoFixture

// SymbolTableContents returns a symbol table's nlist_64 entries and string
// table as read.
func SymbolTableContents(st *MachOSymbolTable) (syms, strs []byte) { return st.syms, st.strs }

// Offsets in dyld_all_image_infos that the dyld tests write.
const (
	DyldOffInfoArrayCount           = dyldOffInfoArrayCount
	DyldOffInfoArray                = dyldOffInfoArray
	DyldOffLibSystemInitialized     = dyldOffLibSystemInitialized
	DyldOffSharedCacheSlide         = dyldOffSharedCacheSlide
	DyldOffSharedCacheUUID          = dyldOffSharedCacheUUID
	DyldOffSharedCacheBaseAddress   = dyldOffSharedCacheBaseAddress
	DyldOffInfoArrayChangeTimestamp = dyldOffInfoArrayChangeTimestamp
)
