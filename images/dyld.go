package images

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// The 64-bit layout of struct dyld_all_image_infos and struct
// dyld_image_info, from dyld's include/mach-o/dyld_images.h (see
// dyld_layout_test.go for the field-by-field check). Fields were appended
// over the years; Version says which are present.
const (
	dyldOffVersion                  = 0
	dyldOffInfoArrayCount           = 4
	dyldOffInfoArray                = 8
	dyldOffNotification             = 16
	dyldOffProcessDetached          = 24
	dyldOffLibSystemInitialized     = 25 // version >= 2
	dyldOffDyldImageLoadAddress     = 32 // version >= 2
	dyldOffJitInfo                  = 40 // version >= 3
	dyldOffDyldVersion              = 48 // version >= 5
	dyldOffErrorMessage             = 56 // version >= 5
	dyldOffTerminationFlags         = 64 // version >= 5
	dyldOffCoreSymbolicationShmPage = 72 // version >= 6
	dyldOffSystemOrderFlag          = 80 // version >= 7
	dyldOffUUIDArrayCount           = 88 // version >= 8
	dyldOffUUIDArray                = 96
	dyldOffDyldAllImageInfosAddress = 104 // version >= 9
	dyldOffInitialImageCount        = 112 // version >= 10
	dyldOffErrorKind                = 120 // version >= 11
	dyldOffSharedCacheSlide         = 152 // version >= 12
	dyldOffSharedCacheUUID          = 160 // version >= 13
	dyldOffSharedCacheBaseAddress   = 176 // version >= 15
	dyldOffInfoArrayChangeTimestamp = 184 // version >= 15
	dyldOffDyldPath                 = 192 // version >= 15
	dyldOffNotifyPorts              = 200 // version >= 15
	dyldOffReserved                 = 232
	// DyldAllImageInfosSize is sizeof(struct dyld_all_image_infos) for a
	// 64-bit process as of version 15 (later versions append fields).
	DyldAllImageInfosSize = 304

	// DyldImageInfoSize is sizeof(struct dyld_image_info) in a 64-bit
	// process: imageLoadAddress, imageFilePath, imageFileModDate.
	DyldImageInfoSize = 24
	// DyldUUIDInfoSize is sizeof(struct dyld_uuid_info) in a 64-bit
	// process: imageLoadAddress, imageUUID[16].
	DyldUUIDInfoSize = 24

	// maxDyldVersion rejects garbage: dyld has used versions 1 to ~20.
	maxDyldVersion = 1000
	// MaxDyldPath bounds an image path read from a target.
	MaxDyldPath = 4096
	// maxDyldImages bounds the image array whatever the caller asks.
	maxDyldImages = 1 << 16
)

// dyldInfosLen returns how many bytes of dyld_all_image_infos a version
// has that ReadDyldAllImageInfos decodes.
func dyldInfosLen(version uint32) int {
	switch {
	case version >= 15:
		return dyldOffNotifyPorts // through dyldPath
	case version >= 13:
		return dyldOffSharedCacheBaseAddress
	case version >= 12:
		return dyldOffSharedCacheUUID
	case version >= 11:
		return dyldOffSharedCacheSlide
	case version >= 10:
		return dyldOffErrorKind
	case version >= 9:
		return dyldOffInitialImageCount
	case version >= 8:
		return dyldOffDyldAllImageInfosAddress
	case version >= 2:
		return dyldOffJitInfo
	}
	return dyldOffLibSystemInitialized
}

// DyldAllImageInfos is the decoded struct dyld_all_image_infos of a 64-bit
// process. Fields that the struct's Version does not have are zero.
type DyldAllImageInfos struct {
	// Addr is where the struct was read.
	Addr uint64
	// Version is the struct's version.
	Version uint32
	// InfoArrayCount is the number of entries at InfoArray.
	InfoArrayCount uint32
	// InfoArray is the address of the dyld_image_info array; 0 while dyld
	// is changing it (read again later).
	InfoArray uint64
	// Notification is the address of dyld's image notifier.
	Notification uint64
	// ProcessDetachedFromSharedRegion and LibSystemInitialized are flags.
	ProcessDetachedFromSharedRegion bool
	LibSystemInitialized            bool // version >= 2
	// DyldImageLoadAddress is dyld's own mach_header (version >= 2).
	DyldImageLoadAddress uint64
	// UUIDArrayCount and UUIDArray locate dyld_uuid_info entries for the
	// images outside the shared cache (version >= 8).
	UUIDArrayCount uint64
	UUIDArray      uint64
	// DyldAllImageInfosAddress is the struct's own address (version >= 9).
	DyldAllImageInfosAddress uint64
	// InitialImageCount is the number of images at launch (version >= 10).
	InitialImageCount uint64
	// SharedCacheSlide is the dyld shared cache's slide (version >= 12).
	SharedCacheSlide uint64
	// SharedCacheUUID is the shared cache's UUID (version >= 13).
	SharedCacheUUID [16]byte
	// SharedCacheBaseAddress is where the shared cache is mapped, and
	// InfoArrayChangeTimestamp changes whenever images are loaded or
	// unloaded (both version >= 15).
	SharedCacheBaseAddress   uint64
	InfoArrayChangeTimestamp uint64
	// DyldPath is the address of dyld's path string (version >= 15).
	DyldPath uint64
}

// ErrDyldInfoArrayBusy is returned when infoArray is NULL: dyld is changing
// the image list; read it again a little later.
var ErrDyldInfoArrayBusy = errors.New("dyld: image array is being updated (infoArray is NULL)")

// ReadDyldAllImageInfos decodes the 64-bit dyld_all_image_infos at addr
// (from task_info(TASK_DYLD_INFO).all_image_info_addr), reading only the
// fields its version has.
func ReadDyldAllImageInfos(r MemoryReader, addr uint64) (*DyldAllImageInfos, error) {
	var head [8]byte
	if err := r.ReadMemory(addr, head[:]); err != nil {
		return nil, fmt.Errorf("dyld_all_image_infos at %#x: %w", addr, err)
	}
	le := binary.LittleEndian
	v := le.Uint32(head[:])
	if v == 0 || v > maxDyldVersion {
		return nil, fmt.Errorf("dyld_all_image_infos at %#x: version %d is not plausible", addr, v)
	}
	buf := make([]byte, dyldInfosLen(v))
	if err := r.ReadMemory(addr, buf); err != nil {
		return nil, fmt.Errorf("dyld_all_image_infos at %#x (version %d, %d bytes): %w", addr, v, len(buf), err)
	}
	u64 := func(off int) uint64 {
		if off+8 > len(buf) {
			return 0
		}
		return le.Uint64(buf[off:])
	}
	in := &DyldAllImageInfos{
		Addr:                            addr,
		Version:                         v,
		InfoArrayCount:                  le.Uint32(buf[dyldOffInfoArrayCount:]),
		InfoArray:                       u64(dyldOffInfoArray),
		Notification:                    u64(dyldOffNotification),
		ProcessDetachedFromSharedRegion: buf[dyldOffProcessDetached] != 0,
	}
	if v >= 2 {
		in.LibSystemInitialized = buf[dyldOffLibSystemInitialized] != 0
		in.DyldImageLoadAddress = u64(dyldOffDyldImageLoadAddress)
	}
	if v >= 8 {
		in.UUIDArrayCount = u64(dyldOffUUIDArrayCount)
		in.UUIDArray = u64(dyldOffUUIDArray)
	}
	if v >= 9 {
		in.DyldAllImageInfosAddress = u64(dyldOffDyldAllImageInfosAddress)
	}
	if v >= 10 {
		in.InitialImageCount = u64(dyldOffInitialImageCount)
	}
	if v >= 12 {
		in.SharedCacheSlide = u64(dyldOffSharedCacheSlide)
	}
	if v >= 13 {
		copy(in.SharedCacheUUID[:], buf[dyldOffSharedCacheUUID:])
	}
	if v >= 15 {
		in.SharedCacheBaseAddress = u64(dyldOffSharedCacheBaseAddress)
		in.InfoArrayChangeTimestamp = u64(dyldOffInfoArrayChangeTimestamp)
		in.DyldPath = u64(dyldOffDyldPath)
	}
	return in, nil
}

// DyldImage is one decoded dyld_image_info.
type DyldImage struct {
	// LoadAddress is the image's mach_header in the target.
	LoadAddress uint64
	// FilePath is the path dyld loaded the image from.
	FilePath string
	// ModDate is the file's modification time (time_t) when loaded.
	ModDate uint64
}

// DyldPartialError reports an image list read only in part: the entries
// that were read are returned beside it.
type DyldPartialError struct {
	// Total is the number of entries the target claims, Read the number
	// returned.
	Total, Read int
	// Errs says what is missing and why (at most a few are kept).
	Errs []error
}

const maxPartialErrs = 8

func (e *DyldPartialError) add(err error) {
	if len(e.Errs) < maxPartialErrs {
		e.Errs = append(e.Errs, err)
	}
}

// Error implements error.
func (e *DyldPartialError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dyld: read %d of %d images", e.Read, e.Total)
	for i, err := range e.Errs {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the per-entry errors.
func (e *DyldPartialError) Unwrap() []error { return e.Errs }

// ReadDyldImageInfos reads the dyld_image_info array of infos, at most max
// entries (max <= 0: 4096; never more than 65536). Entries that cannot be
// read (a NULL or repeated load address, an unreadable or unterminated
// path) are left out; the entries read are returned with a
// *DyldPartialError that says what is missing. Paths longer than
// MaxDyldPath bytes are an error for their entry.
func ReadDyldImageInfos(r MemoryReader, infos *DyldAllImageInfos, max int) ([]DyldImage, error) {
	if infos.InfoArray == 0 {
		return nil, ErrDyldInfoArrayBusy
	}
	if max <= 0 {
		max = 4096
	}
	max = min(max, maxDyldImages)
	total := int(infos.InfoArrayCount)
	n := min(total, max)
	perr := &DyldPartialError{Total: total}
	if total > n {
		perr.add(fmt.Errorf("%d entries beyond the limit of %d not read", total-n, n))
	}
	if infos.InfoArray+uint64(n)*DyldImageInfoSize < infos.InfoArray {
		return nil, fmt.Errorf("dyld: image array of %d entries at %#x wraps around the address space", n, infos.InfoArray)
	}
	buf := make([]byte, n*DyldImageInfoSize)
	if err := r.ReadMemory(infos.InfoArray, buf); err != nil {
		// Read entry by entry to keep what is readable.
		buf = buf[:0]
		var e [DyldImageInfoSize]byte
		for i := 0; i < n; i++ {
			if err := r.ReadMemory(infos.InfoArray+uint64(i)*DyldImageInfoSize, e[:]); err != nil {
				perr.add(fmt.Errorf("image array at %#x: entries %d to %d unreadable: %w", infos.InfoArray, i, n-1, err))
				break
			}
			buf = append(buf, e[:]...)
		}
	}
	le := binary.LittleEndian
	out := make([]DyldImage, 0, len(buf)/DyldImageInfoSize)
	seen := make(map[uint64]int, len(buf)/DyldImageInfoSize)
	var pathBuf [MaxDyldPath]byte
	for i := 0; i+DyldImageInfoSize <= len(buf); i += DyldImageInfoSize {
		idx := i / DyldImageInfoSize
		e := buf[i : i+DyldImageInfoSize]
		im := DyldImage{LoadAddress: le.Uint64(e), ModDate: le.Uint64(e[16:])}
		if im.LoadAddress == 0 {
			perr.add(fmt.Errorf("entry %d: NULL load address", idx))
			continue
		}
		if j, dup := seen[im.LoadAddress]; dup {
			perr.add(fmt.Errorf("entry %d: load address %#x repeats entry %d", idx, im.LoadAddress, j))
			continue
		}
		seen[im.LoadAddress] = idx
		path, err := ReadCString(r, le.Uint64(e[8:]), pathBuf[:])
		if err != nil {
			perr.add(fmt.Errorf("entry %d (image at %#x): path: %w", idx, im.LoadAddress, err))
			continue
		}
		im.FilePath = path
		out = append(out, im)
	}
	perr.Read = len(out)
	if perr.Read < total {
		return out, perr
	}
	return out, nil
}

// ReadCString reads a NUL-terminated string at addr in a target, at most
// len(buf)-1 bytes long, using buf as scratch. It reads up to 256-byte
// boundaries at a time so that a string ending just before unmapped memory
// is still read.
func ReadCString(r MemoryReader, addr uint64, buf []byte) (string, error) {
	if addr == 0 {
		return "", errors.New("NULL string pointer")
	}
	const chunk = 256
	n := 0
	for n < len(buf) {
		a := addr + uint64(n)
		if a < addr {
			return "", fmt.Errorf("string at %#x wraps around the address space", addr)
		}
		k := min(int(chunk-a%chunk), len(buf)-n)
		if err := r.ReadMemory(a, buf[n:n+k]); err != nil {
			// The string may end before the unreadable part: read
			// byte by byte up to it.
			for j := n; j < n+k; j++ {
				if r.ReadMemory(addr+uint64(j), buf[j:j+1]) != nil {
					return "", fmt.Errorf("string at %#x: %w", addr, err)
				}
				if buf[j] == 0 {
					return string(buf[:j]), nil
				}
			}
		}
		for j := n; j < n+k; j++ {
			if buf[j] == 0 {
				return string(buf[:j]), nil
			}
		}
		n += k
	}
	return "", fmt.Errorf("string at %#x: no NUL in %d bytes", addr, len(buf))
}

// DyldImages lists the Mach-O images of a 64-bit target through its memory
// alone: dyld_all_image_infos at infosAddr, its image array (at most max
// entries, see ReadDyldImageInfos), each image's header, and dyld itself.
// Every Image has Memory set to r. Images that cannot be read are left out
// and reported in a *DyldPartialError beside the ones that could.
func DyldImages(r MemoryReader, infosAddr uint64, max int) ([]*Image, *DyldAllImageInfos, error) {
	infos, err := ReadDyldAllImageInfos(r, infosAddr)
	if err != nil {
		return nil, nil, err
	}
	list, lerr := ReadDyldImageInfos(r, infos, max)
	if lerr != nil && list == nil {
		return nil, infos, lerr
	}
	perr := &DyldPartialError{Total: infos.infoCount()}
	var pe *DyldPartialError
	if errors.As(lerr, &pe) {
		for _, e := range pe.Errs {
			perr.add(e)
		}
	}
	// The shared cache every cached dylib of the task is in (version 13
	// added sharedCacheUUID to dyld_all_image_infos).
	cache := ""
	if infos.SharedCacheUUID != ([16]byte{}) {
		cache = hex.EncodeToString(infos.SharedCacheUUID[:])
	}
	var out []*Image
	for _, d := range list {
		im, m, err := machOImageFromMemory(r, d.LoadAddress, d.FilePath)
		if err != nil {
			perr.add(fmt.Errorf("image %s: %w", d.FilePath, err))
			continue
		}
		if m.Flags&MHDylibInCache != 0 {
			im.SharedCache = cache
		}
		out = append(out, im)
	}
	if infos.DyldImageLoadAddress != 0 {
		path := "/usr/lib/dyld"
		if infos.DyldPath != 0 {
			var buf [MaxDyldPath]byte
			if p, err := ReadCString(r, infos.DyldPath, buf[:]); err == nil && p != "" {
				path = p
			}
		}
		perr.Total++
		if im, err := MachOImageFromMemory(r, infos.DyldImageLoadAddress, path); err == nil {
			out = append(out, im)
		} else {
			perr.add(fmt.Errorf("dyld: %w", err))
		}
	}
	perr.Read = len(out)
	if perr.Read < perr.Total {
		return out, infos, perr
	}
	return out, infos, nil
}

// infoCount returns InfoArrayCount as an int.
func (in *DyldAllImageInfos) infoCount() int { return int(in.InfoArrayCount) }
