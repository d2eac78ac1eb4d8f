package images

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Sizes and bounds of the dyld shared cache's file structures, from
// dyld-1378 include/mach-o/dyld_cache_format.h: struct
// dyld_cache_image_info (lines 157-164), struct dyld_subcache_entry_v1
// (575-579) and struct dyld_subcache_entry (581-586).
const (
	dcImageInfoSize     = 32
	dcSubCacheEntryV1   = 24
	dcSubCacheEntryV2   = 56
	dcSubCacheSuffixLen = 32

	// maxDyldSubCaches bounds the subcache files of one cache (macOS 15
	// arm64e has a few dozen).
	maxDyldSubCaches = 256
	// maxDyldMappings bounds one file's mappings (dyld writes a handful).
	maxDyldMappings = 1024
	// maxDyldImagePath bounds one image path (PATH_MAX).
	maxDyldImagePath = 1024
)

// DyldCacheMapping is a dyld_cache_mapping_info: size bytes at the
// unslid address Address come from FileOffset in its file.
type DyldCacheMapping struct {
	Address, Size, FileOffset uint64
}

// ReadDyldCacheMappings reads the mappings of the cache file r of size
// bytes whose header is h, each checked to lie inside the file.
func ReadDyldCacheMappings(r io.ReaderAt, size int64, h *DyldCacheHeader) ([]DyldCacheMapping, error) {
	if h.MappingCount > maxDyldMappings {
		return nil, fmt.Errorf("dyld cache: %d mappings exceed the limit of %d", h.MappingCount, maxDyldMappings)
	}
	n := uint64(h.MappingCount) * dcMappingInfoSize
	if size < 0 || uint64(h.MappingOffset) > uint64(size) || n > uint64(size)-uint64(h.MappingOffset) {
		return nil, fmt.Errorf("dyld cache: %d mappings at %#x run past the end of the %d-byte file", h.MappingCount, h.MappingOffset, size)
	}
	raw, err := readBounded(r, uint64(h.MappingOffset), n, "dyld cache: mappings")
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	out := make([]DyldCacheMapping, 0, h.MappingCount)
	for i := uint64(0); i < n; i += dcMappingInfoSize {
		m := DyldCacheMapping{Address: le.Uint64(raw[i:]), Size: le.Uint64(raw[i+8:]), FileOffset: le.Uint64(raw[i+16:])}
		if m.FileOffset > uint64(size) || m.Size > uint64(size)-m.FileOffset || m.Address+m.Size < m.Address {
			return nil, fmt.Errorf("dyld cache: mapping of %#x bytes at file offset %#x (address %#x) is outside the %d-byte file", m.Size, m.FileOffset, m.Address, size)
		}
		out = append(out, m)
	}
	return out, nil
}

// DyldSubCache is one entry of the main file's subcache array.
type DyldSubCache struct {
	// UUID is the subcache file's, which its header must have.
	UUID [16]byte
	// Suffix is appended to the main file's path (without
	// ".development") to name the subcache file: the entry's fileSuffix,
	// or ".N" (N = index+1) for dyld_subcache_entry_v1, as dyld-1378
	// common/DyldSharedCache.cpp DyldSharedCache::mapCacheFiles builds it.
	Suffix string
}

// ReadDyldSubCaches reads the subcache entries of the main cache file r
// of size bytes whose header is h. A suffix holding a path separator or
// "..", or not NUL-terminated, is an error: it could name a file outside
// the cache's directory.
func ReadDyldSubCaches(r io.ReaderAt, size int64, h *DyldCacheHeader) ([]DyldSubCache, error) {
	if h.SubCacheArrayCount == 0 {
		return nil, nil
	}
	if h.SubCacheArrayCount > maxDyldSubCaches {
		return nil, fmt.Errorf("dyld cache: %d subcaches exceed the limit of %d", h.SubCacheArrayCount, maxDyldSubCaches)
	}
	esize := uint64(dcSubCacheEntryV1)
	if h.SubCacheEntryV2 {
		esize = dcSubCacheEntryV2
	}
	n := uint64(h.SubCacheArrayCount) * esize
	if size < 0 || uint64(h.SubCacheArrayOffset) > uint64(size) || n > uint64(size)-uint64(h.SubCacheArrayOffset) {
		return nil, fmt.Errorf("dyld cache: %d subcache entries at %#x run past the end of the %d-byte file", h.SubCacheArrayCount, h.SubCacheArrayOffset, size)
	}
	raw, err := readBounded(r, uint64(h.SubCacheArrayOffset), n, "dyld cache: subcache entries")
	if err != nil {
		return nil, err
	}
	out := make([]DyldSubCache, 0, h.SubCacheArrayCount)
	for i := uint64(0); i < uint64(h.SubCacheArrayCount); i++ {
		e := raw[i*esize:]
		var s DyldSubCache
		copy(s.UUID[:], e[:16])
		if !h.SubCacheEntryV2 {
			s.Suffix = fmt.Sprintf(".%d", i+1)
		} else {
			suf := e[24 : 24+dcSubCacheSuffixLen]
			k := 0
			for k < len(suf) && suf[k] != 0 {
				k++
			}
			s.Suffix = string(suf[:k])
			if k == len(suf) || k == 0 || strings.ContainsAny(s.Suffix, "/\\") || strings.Contains(s.Suffix, "..") {
				return nil, fmt.Errorf("dyld cache: subcache %d has a bad file suffix %q", i, s.Suffix)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// DyldCacheImage is one dyld_cache_image_info: a dylib's unslid
// mach_header address and its install path.
type DyldCacheImage struct {
	Address uint64
	Path    string
}

// ReadDyldCacheImages reads the image list of the main cache file r of
// size bytes whose header is h; each path is read from the file at its
// pathFileOffset (as DyldSharedCache::hasImagePath does). A path past the
// end of the file, unterminated or longer than 1024 bytes is an error.
func ReadDyldCacheImages(r io.ReaderAt, size int64, h *DyldCacheHeader) ([]DyldCacheImage, error) {
	if h.ImagesCount == 0 {
		return nil, nil
	}
	if h.ImagesCount > maxLocalSymbolsEntries {
		return nil, fmt.Errorf("dyld cache: %d images exceed the limit of %d", h.ImagesCount, maxLocalSymbolsEntries)
	}
	n := uint64(h.ImagesCount) * dcImageInfoSize
	if size < 0 || uint64(h.ImagesOffset) > uint64(size) || n > uint64(size)-uint64(h.ImagesOffset) {
		return nil, fmt.Errorf("dyld cache: %d images at %#x run past the end of the %d-byte file", h.ImagesCount, h.ImagesOffset, size)
	}
	raw, err := readBounded(r, uint64(h.ImagesOffset), n, "dyld cache: image list")
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	// One read of at most PATH_MAX+1 bytes a path, whatever the offsets.
	buf := make([]byte, maxDyldImagePath+1)
	out := make([]DyldCacheImage, 0, h.ImagesCount)
	for i := uint64(0); i < n; i += dcImageInfoSize {
		off := uint64(le.Uint32(raw[i+24:]))
		var p []byte
		if off < uint64(size) {
			b := buf[:min(uint64(len(buf)), uint64(size)-off)]
			got, err := r.ReadAt(b, int64(off))
			if got < len(b) {
				return nil, fmt.Errorf("dyld cache: reading image %d's path at %#x: %w", i/dcImageInfoSize, off, orEOF(err))
			}
			if k := bytes.IndexByte(b, 0); k >= 0 {
				p = b[:k]
			}
		}
		if p == nil {
			return nil, fmt.Errorf("dyld cache: image %d: no path of at most %d bytes at %#x", i/dcImageInfoSize, maxDyldImagePath, off)
		}
		out = append(out, DyldCacheImage{Address: le.Uint64(raw[i:]), Path: string(p)})
	}
	return out, nil
}

// DyldCacheFile is one file of a cache, main or subcache, with its
// mappings.
type DyldCacheFile struct {
	R        io.ReaderAt
	Size     int64
	Mappings []DyldCacheMapping
}

// DyldCacheOpener opens the subcache file whose name is the main file's
// with suffix appended, returning it and its size.
type DyldCacheOpener func(suffix string) (io.ReaderAt, int64, error)

// ErrDyldSubCacheMismatch is returned for a subcache file whose UUID is
// not the one the main file's entry names.
var ErrDyldSubCacheMismatch = errors.New("dyld cache: a subcache file does not belong to this cache (UUID mismatch)")

// DyldCache is a dyld shared cache on disk: the main file and its
// subcaches, whose mappings together cover the cache's unslid address
// range, and the main file's image list.
type DyldCache struct {
	Header *DyldCacheHeader
	Images []DyldCacheImage
	files  []DyldCacheFile
	// spans are every file's mappings, sorted by address.
	spans []dyldSpan
}

type dyldSpan struct {
	DyldCacheMapping
	file int
}

// OpenDyldCache reads the main cache file main, of size bytes, and the
// subcaches its header lists, opened with open; each subcache's header
// must have the UUID its entry names (as DyldSharedCache::mapCacheFiles
// checks). Mappings that overlap one another are an error.
func OpenDyldCache(main io.ReaderAt, size int64, open DyldCacheOpener) (*DyldCache, error) {
	h, err := ReadDyldCacheHeader(main)
	if err != nil {
		return nil, err
	}
	c := &DyldCache{Header: h}
	if c.Images, err = ReadDyldCacheImages(main, size, h); err != nil {
		return nil, err
	}
	if err := c.addFile(main, size, h); err != nil {
		return nil, err
	}
	subs, err := ReadDyldSubCaches(main, size, h)
	if err != nil {
		return nil, err
	}
	for i, s := range subs {
		r, n, err := open(s.Suffix)
		if err != nil {
			return nil, fmt.Errorf("dyld cache: subcache %d (%s): %w", i, s.Suffix, err)
		}
		sh, err := ReadDyldCacheHeader(r)
		if err != nil {
			return nil, fmt.Errorf("dyld cache: subcache %d (%s): %w", i, s.Suffix, err)
		}
		if sh.UUID != s.UUID {
			return nil, fmt.Errorf("%w: %s has %x, the main file names %x", ErrDyldSubCacheMismatch, s.Suffix, sh.UUID, s.UUID)
		}
		if err := c.addFile(r, n, sh); err != nil {
			return nil, fmt.Errorf("dyld cache: subcache %d (%s): %w", i, s.Suffix, err)
		}
	}
	sort.Slice(c.spans, func(i, j int) bool { return c.spans[i].Address < c.spans[j].Address })
	for i := 1; i < len(c.spans); i++ {
		if p := c.spans[i-1]; p.Address+p.Size > c.spans[i].Address {
			return nil, fmt.Errorf("dyld cache: mappings at %#x and %#x overlap", p.Address, c.spans[i].Address)
		}
	}
	return c, nil
}

func (c *DyldCache) addFile(r io.ReaderAt, size int64, h *DyldCacheHeader) error {
	ms, err := ReadDyldCacheMappings(r, size, h)
	if err != nil {
		return err
	}
	c.files = append(c.files, DyldCacheFile{R: r, Size: size, Mappings: ms})
	for _, m := range ms {
		if m.Size > 0 {
			c.spans = append(c.spans, dyldSpan{m, len(c.files) - 1})
		}
	}
	return nil
}

// Files returns the cache's files, the main one first.
func (c *DyldCache) Files() []DyldCacheFile { return c.files }

// ReadUnslid reads len(dst) bytes at the unslid address addr from the
// files whose mappings cover it; a range not wholly covered is an error.
func (c *DyldCache) ReadUnslid(addr uint64, dst []byte) error {
	for len(dst) > 0 {
		i := sort.Search(len(c.spans), func(i int) bool { return c.spans[i].Address+c.spans[i].Size > addr })
		if i == len(c.spans) || c.spans[i].Address > addr {
			return fmt.Errorf("dyld cache: address %#x is in no mapping", addr)
		}
		s := c.spans[i]
		n := min(uint64(len(dst)), s.Address+s.Size-addr)
		off := s.FileOffset + (addr - s.Address)
		got, err := c.files[s.file].R.ReadAt(dst[:n], int64(off))
		if uint64(got) < n {
			return fmt.Errorf("dyld cache: reading %d bytes at file offset %#x: %w", n, off, orEOF(err))
		}
		dst, addr = dst[n:], addr+n
	}
	return nil
}

// Memory returns a MemoryReader of the cache as a task with the given
// slide sees it: address a reads the cache at a-slide. Readers of one
// cache with one slide compare equal (so StringPools share their pool).
func (c *DyldCache) Memory(slide uint64) MemoryReader { return dyldCacheMemory{c, slide} }

type dyldCacheMemory struct {
	c     *DyldCache
	slide uint64
}

func (m dyldCacheMemory) ReadMemory(addr uint64, dst []byte) error {
	return m.c.ReadUnslid(addr-m.slide, dst)
}

// ErrDyldImageNotFound is returned by FindImage for an image the cache
// does not list.
var ErrDyldImageNotFound = errors.New("dyld cache: no such image in the cache")

// FindImage returns the unslid mach_header address of the cached dylib
// with install path path, or, when no path matches and uuid is not
// empty, of the one whose LC_UUID (lowercase hex) is uuid.
func (c *DyldCache) FindImage(path, uuid string) (uint64, error) {
	for _, im := range c.Images {
		if im.Path == path {
			return im.Address, nil
		}
	}
	if uuid != "" {
		mem := c.Memory(0)
		for _, im := range c.Images {
			if m, err := ReadMachOFromMemory(mem, im.Address); err == nil && m.UUIDString() == uuid {
				return im.Address, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: %s (UUID %q)", ErrDyldImageNotFound, path, uuid)
}
