package images

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
)

// The dyld shared cache's on-disk structures, from dyld-1378
// include/mach-o/dyld_cache_format.h (see dyldcache_layout_test.go for the
// field-by-field check): struct dyld_cache_header, struct
// dyld_cache_mapping_info, struct dyld_cache_local_symbols_info and struct
// dyld_cache_local_symbols_entry(_64).
const (
	dcOffMagic               = 0
	dcOffMappingOffset       = 16
	dcOffMappingCount        = 20
	dcOffImagesOffsetOld     = 24
	dcOffImagesCountOld      = 28
	dcOffLocalSymbolsOffset  = 72
	dcOffLocalSymbolsSize    = 80
	dcOffUUID                = 88
	dcOffSubCacheArrayOffset = 392
	dcOffSubCacheArrayCount  = 396
	dcOffSymbolFileUUID      = 400
	dcOffImagesOffset        = 448
	dcOffImagesCount         = 452
	dcOffCacheSubType        = 456
	// dcHeaderRead is how much of the header ReadDyldCacheHeader reads:
	// through cacheSubType.
	dcHeaderRead = dcOffCacheSubType + 4

	dcMappingInfoSize       = 32 // sizeof(struct dyld_cache_mapping_info)
	dcLocalSymbolsInfoSize  = 24 // sizeof(struct dyld_cache_local_symbols_info)
	dcLocalSymbolsEntrySize = 12 // sizeof(struct dyld_cache_local_symbols_entry)
	dcLocalSymbolsEntry64   = 16 // sizeof(struct dyld_cache_local_symbols_entry_64)

	// maxLocalSymbolsEntries bounds the dylibs of one cache (macOS 15 has
	// about 4000).
	maxLocalSymbolsEntries = 1 << 17
	// maxLocalName bounds one local symbol's name: a longer one is
	// dropped.
	maxLocalName = 64 << 10
	// localStringsBlock is how much of the local string pool is read at a
	// time: one dylib's names are mostly next to each other.
	localStringsBlock = 64 << 10
)

// MHDylibInCache is the mach_header flag MH_DYLIB_IN_CACHE (<mach-o/loader.h>,
// tested by dyld-1378 common/MachOFile.cpp MachOFile::inDyldCache): the
// image is a dylib of the dyld shared cache.
const MHDylibInCache = 0x80000000

// DyldCacheHeader is the part of a dyld_cache_header that locating local
// symbols needs.
type DyldCacheHeader struct {
	// Magic is the magic string, such as "dyld_v1  arm64e".
	Magic string
	// MappingOffset is where the mappings start, and so the size of the
	// header the cache was built with: fields at or past it are absent.
	MappingOffset, MappingCount uint32
	// LocalSymbolsOffset and LocalSymbolsSize locate the
	// dyld_cache_local_symbols_info in this file (0 when absent).
	LocalSymbolsOffset, LocalSymbolsSize uint64
	// UUID identifies this file.
	UUID [16]byte
	// SymbolFileUUID is the UUID of the .symbols file holding the cache's
	// unmapped local symbols; zero when the cache has none or its header
	// predates the field.
	SymbolFileUUID [16]byte
	// BaseAddress is the first mapping's unslid address, from which a
	// dylib's cache offset counts (dyld-1378 common/DyldSharedCache.cpp
	// DyldSharedCache::addressInText: mappings[0].address + cacheOffset).
	BaseAddress uint64
	// SubCacheArrayOffset and SubCacheArrayCount locate the subcache
	// entries in the main file (zero when the header predates them:
	// DyldSharedCache::numSubCaches). SubCacheEntryV2 says they are
	// dyld_subcache_entry (with a file suffix) rather than
	// dyld_subcache_entry_v1: the header has cacheSubType
	// (DyldSharedCache::getSubCacheUuid).
	SubCacheArrayOffset, SubCacheArrayCount uint32
	SubCacheEntryV2                         bool
	// ImagesOffset and ImagesCount locate the dyld_cache_image_info
	// array in the main file: imagesOffset/imagesCount when the header
	// has them, else imagesOffsetOld/imagesCountOld
	// (DyldSharedCache::images, DyldSharedCache::imagesCount).
	ImagesOffset, ImagesCount uint32
}

// has reports whether the header, as built, has the field at offset off of
// size n: dyld treats mappingOffset as the header's size
// (DyldSharedCache::hasLocalSymbolsInfo, hasLocalSymbolsInfoFile).
func (h *DyldCacheHeader) has(off, n uint32) bool { return h.MappingOffset >= off+n }

// ReadDyldCacheHeader decodes the dyld_cache_header at the start of r.
func ReadDyldCacheHeader(r io.ReaderAt) (*DyldCacheHeader, error) {
	var b [dcHeaderRead]byte
	n, err := r.ReadAt(b[:], 0)
	if n < dcOffMappingCount+4 {
		return nil, fmt.Errorf("dyld cache: reading header: %w", orEOF(err))
	}
	if !bytes.HasPrefix(b[:], []byte("dyld_v")) {
		return nil, fmt.Errorf("dyld cache: bad magic %q", cstring(b[:16]))
	}
	le := binary.LittleEndian
	h := &DyldCacheHeader{
		Magic:         cstring(b[dcOffMagic:16]),
		MappingOffset: le.Uint32(b[dcOffMappingOffset:]),
		MappingCount:  le.Uint32(b[dcOffMappingCount:]),
	}
	if h.MappingOffset < dcOffMappingCount+4 {
		return nil, fmt.Errorf("dyld cache: mappingOffset %#x is inside the header", h.MappingOffset)
	}
	// Fields the header has must have been read.
	avail := uint32(n)
	field := func(off, size uint32) bool { return h.has(off, size) && avail >= off+size }
	if field(dcOffLocalSymbolsSize, 8) {
		h.LocalSymbolsOffset = le.Uint64(b[dcOffLocalSymbolsOffset:])
		h.LocalSymbolsSize = le.Uint64(b[dcOffLocalSymbolsSize:])
	}
	if field(dcOffUUID, 16) {
		copy(h.UUID[:], b[dcOffUUID:])
	}
	if field(dcOffSymbolFileUUID, 16) {
		copy(h.SymbolFileUUID[:], b[dcOffSymbolFileUUID:])
	}
	// dyld-1378 common/DyldSharedCache.cpp: numSubCaches counts
	// subcaches only when mappingOffset > offsetof(subCacheArrayCount);
	// getSubCacheUuid reads dyld_subcache_entry when mappingOffset >
	// offsetof(cacheSubType); images() takes imagesOffset when
	// mappingOffset >= offsetof(imagesCount).
	if h.MappingOffset > dcOffSubCacheArrayCount && avail >= dcOffSubCacheArrayCount+4 {
		h.SubCacheArrayOffset = le.Uint32(b[dcOffSubCacheArrayOffset:])
		h.SubCacheArrayCount = le.Uint32(b[dcOffSubCacheArrayCount:])
		h.SubCacheEntryV2 = h.MappingOffset > dcOffCacheSubType
	}
	switch {
	case h.MappingOffset >= dcOffImagesCount && avail >= dcOffImagesCount+4:
		h.ImagesOffset = le.Uint32(b[dcOffImagesOffset:])
		h.ImagesCount = le.Uint32(b[dcOffImagesCount:])
	case h.MappingOffset < dcOffImagesCount && avail >= dcOffImagesCountOld+4 && h.has(dcOffImagesCountOld, 4):
		h.ImagesOffset = le.Uint32(b[dcOffImagesOffsetOld:])
		h.ImagesCount = le.Uint32(b[dcOffImagesCountOld:])
	}
	if h.MappingCount > 0 {
		var m [8]byte // dyld_cache_mapping_info.address
		if _, err := r.ReadAt(m[:], int64(h.MappingOffset)); err != nil {
			return nil, fmt.Errorf("dyld cache: reading the first mapping at %#x: %w", h.MappingOffset, orEOF(err))
		}
		h.BaseAddress = le.Uint64(m[:])
	}
	return h, nil
}

// ErrDyldSymbolsMismatch is returned for a .symbols file whose UUID is not
// the one the main cache file's header names.
var ErrDyldSymbolsMismatch = errors.New("dyld cache: the local symbols file does not belong to this cache (UUID mismatch)")

// DyldLocalSymbols is the local symbol table of a dyld shared cache: the
// nlist entries and names the cache builder took out of every cached dylib
// (leaving "<redacted>" in memory), kept in the cache's .symbols file
// (macOS 12 and later) or at the end of an older cache's main file.
type DyldLocalSymbols struct {
	r       io.ReaderAt
	info    uint64 // file offset of the dyld_cache_local_symbols_info
	nlists  uint64 // file offset of the nlist_64 array
	nnlist  uint32
	strings uint64 // file offset of the string pool
	strSize uint32
	entries []localEntry // sorted by dylibOffset
}

type localEntry struct {
	dylibOffset uint64
	start, n    uint32
}

// OpenDyldLocalSymbols reads the header and the per-dylib index of the
// local symbols in r, a file of size bytes. want, when not zero, is the
// UUID r's header must have: the main cache header's SymbolFileUUID (as
// dyld-1378 other-tools/dsc_extractor.cpp checks the .symbols file it
// maps). Every count and offset is checked against size before anything
// is allocated.
func OpenDyldLocalSymbols(r io.ReaderAt, size int64, want [16]byte) (*DyldLocalSymbols, error) {
	h, err := ReadDyldCacheHeader(r)
	if err != nil {
		return nil, err
	}
	if want != ([16]byte{}) && h.UUID != want {
		return nil, fmt.Errorf("%w: file has %x, cache names %x", ErrDyldSymbolsMismatch, h.UUID, want)
	}
	// DyldSharedCache::hasLocalSymbolsInfo.
	if h.LocalSymbolsOffset == 0 || h.LocalSymbolsSize < dcLocalSymbolsInfoSize {
		return nil, errors.New("dyld cache: no local symbols in this file")
	}
	if size < 0 || h.LocalSymbolsOffset > uint64(size) || h.LocalSymbolsSize > uint64(size)-h.LocalSymbolsOffset {
		return nil, fmt.Errorf("dyld cache: local symbols (%d bytes at %#x) run past the end of the %d-byte file", h.LocalSymbolsSize, h.LocalSymbolsOffset, size)
	}
	var ib [dcLocalSymbolsInfoSize]byte
	if _, err := r.ReadAt(ib[:], int64(h.LocalSymbolsOffset)); err != nil {
		return nil, fmt.Errorf("dyld cache: reading dyld_cache_local_symbols_info: %w", orEOF(err))
	}
	le := binary.LittleEndian
	nlistOff, nnlist := le.Uint32(ib[0:]), le.Uint32(ib[4:])
	strOff, strSize := le.Uint32(ib[8:]), le.Uint32(ib[12:])
	entOff, nent := le.Uint32(ib[16:]), le.Uint32(ib[20:])
	within := func(off uint32, n uint64) bool {
		return uint64(off) <= h.LocalSymbolsSize && n <= h.LocalSymbolsSize-uint64(off)
	}
	if !within(nlistOff, uint64(nnlist)*nlistSize) {
		return nil, fmt.Errorf("dyld cache: %d local nlists at %#x run past the local symbols", nnlist, nlistOff)
	}
	if !within(strOff, uint64(strSize)) {
		return nil, fmt.Errorf("dyld cache: %d-byte local string pool at %#x runs past the local symbols", strSize, strOff)
	}
	// New caches (a header with symbolFileUUID) key dylibs by a 64-bit VM
	// offset, older ones by a 32-bit file offset
	// (DyldSharedCache::forEachLocalSymbolEntry).
	esize := uint64(dcLocalSymbolsEntrySize)
	if h.MappingOffset >= dcOffSymbolFileUUID {
		esize = dcLocalSymbolsEntry64
	}
	if nent > maxLocalSymbolsEntries {
		return nil, fmt.Errorf("dyld cache: %d local symbol entries exceed the limit of %d", nent, maxLocalSymbolsEntries)
	}
	if !within(entOff, uint64(nent)*esize) {
		return nil, fmt.Errorf("dyld cache: %d local symbol entries at %#x run past the local symbols", nent, entOff)
	}
	raw, err := readBounded(r, h.LocalSymbolsOffset+uint64(entOff), uint64(nent)*esize, "dyld cache: local symbol entries")
	if err != nil {
		return nil, err
	}
	l := &DyldLocalSymbols{
		r: r, info: h.LocalSymbolsOffset,
		nlists: h.LocalSymbolsOffset + uint64(nlistOff), nnlist: nnlist,
		strings: h.LocalSymbolsOffset + uint64(strOff), strSize: strSize,
		entries: make([]localEntry, 0, nent),
	}
	for i := uint64(0); i < uint64(nent); i++ {
		b := raw[i*esize:]
		var e localEntry
		if esize == dcLocalSymbolsEntry64 {
			e = localEntry{le.Uint64(b), le.Uint32(b[8:]), le.Uint32(b[12:])}
		} else {
			e = localEntry{uint64(le.Uint32(b)), le.Uint32(b[4:]), le.Uint32(b[8:])}
		}
		l.entries = append(l.entries, e)
	}
	sort.SliceStable(l.entries, func(i, j int) bool { return l.entries[i].dylibOffset < l.entries[j].dylibOffset })
	return l, nil
}

// Len returns the number of dylibs with an entry.
func (l *DyldLocalSymbols) Len() int { return len(l.entries) }

// DylibOffsets returns the dylib offsets the file has entries for, in
// increasing order.
func (l *DyldLocalSymbols) DylibOffsets() []uint64 {
	out := make([]uint64, len(l.entries))
	for i, e := range l.entries {
		out[i] = e.dylibOffset
	}
	return out
}

// ErrNoLocalSymbols is returned by Symbols for a dylib the file has no
// entry for.
var ErrNoLocalSymbols = errors.New("dyld cache: no local symbols for this dylib")

// Symbols returns the local symbols of the dylib whose mach_header is at
// dylibOffset from the cache's base address (its unslid __TEXT address
// minus DyldCacheHeader.BaseAddress, as dyld-1378
// libdyld_introspection/dyld_introspection.cpp
// dyld_image_local_nlist_content_4Symbolication matches
// Image::sharedCacheVMOffset against each entry's dylibOffset). The table
// holds the dylib's nlist entries and a compact string table of their
// names only; names longer than 64 KiB or outside the pool are dropped
// (their entries get an empty name).
func (l *DyldLocalSymbols) Symbols(dylibOffset uint64) (*MachOSymbolTable, error) {
	i := sort.Search(len(l.entries), func(i int) bool { return l.entries[i].dylibOffset >= dylibOffset })
	if i == len(l.entries) || l.entries[i].dylibOffset != dylibOffset {
		return nil, fmt.Errorf("%w (offset %#x)", ErrNoLocalSymbols, dylibOffset)
	}
	e := l.entries[i]
	if e.start > l.nnlist || e.n > l.nnlist-e.start {
		return nil, fmt.Errorf("dyld cache: dylib at %#x: nlists [%d, +%d) outside the %d local nlists", dylibOffset, e.start, e.n, l.nnlist)
	}
	syms, err := readBounded(l.r, l.nlists+uint64(e.start)*nlistSize, uint64(e.n)*nlistSize, "dyld cache: local nlists")
	if err != nil {
		return nil, err
	}
	// Copy each name into a string table of this dylib's own, so that the
	// pool (hundreds of MB on a real system) is never read whole.
	strs := []byte{0}
	br := blockReader{r: l.r, base: l.strings, size: uint64(l.strSize)}
	le := binary.LittleEndian
	for k := 0; k < len(syms); k += nlistSize {
		strx := le.Uint32(syms[k:])
		name, err := br.cstring(uint64(strx))
		if err != nil {
			return nil, err
		}
		if len(name) == 0 {
			le.PutUint32(syms[k:], 0)
			continue
		}
		le.PutUint32(syms[k:], uint32(len(strs)))
		strs = append(append(strs, name...), 0)
		if len(strs) > maxLinkeditBlob {
			return nil, fmt.Errorf("dyld cache: dylib at %#x: local names exceed %d bytes", dylibOffset, maxLinkeditBlob)
		}
	}
	return &MachOSymbolTable{syms: syms, strs: strs}, nil
}

// blockReader reads NUL-terminated strings from a pool of size bytes at
// file offset base, a block at a time, keeping the last block.
type blockReader struct {
	r          io.ReaderAt
	base, size uint64
	blk        []byte
	blkOff     uint64 // pool offset of blk
	have       bool
}

// cstring returns the string at pool offset off (a view into the block
// buffer, valid until the next call), or nil when off is outside the pool
// or the string is longer than maxLocalName. Only a failed read is an
// error.
func (b *blockReader) cstring(off uint64) ([]byte, error) {
	if off >= b.size {
		return nil, nil
	}
	var out []byte
	for n := 0; n <= maxLocalName; {
		p := off + uint64(n)
		if p >= b.size {
			return nil, nil // unterminated at the pool's end
		}
		if !b.have || p < b.blkOff || p >= b.blkOff+uint64(len(b.blk)) {
			if err := b.load(p); err != nil {
				return nil, err
			}
		}
		chunk := b.blk[p-b.blkOff:]
		if i := bytes.IndexByte(chunk, 0); i >= 0 {
			if out == nil {
				return chunk[:i], nil
			}
			return append(out, chunk[:i]...), nil
		}
		out = append(out, chunk...)
		n += len(chunk)
	}
	return nil, nil
}

func (b *blockReader) load(p uint64) error {
	start := p &^ (localStringsBlock - 1)
	n := min(uint64(localStringsBlock), b.size-start)
	if b.blk == nil {
		b.blk = make([]byte, localStringsBlock)
	}
	b.blk = b.blk[:n]
	if _, err := b.r.ReadAt(b.blk, int64(b.base+start)); err != nil {
		b.have = false
		return fmt.Errorf("dyld cache: reading local strings at %#x: %w", b.base+start, orEOF(err))
	}
	b.blkOff, b.have = start, true
	return nil
}
