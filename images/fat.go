package images

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Universal ("fat") file constants from <mach-o/fat.h>. The fat header and
// its entries are big-endian.
const (
	fatMagic   = 0xcafebabe
	fatCigam   = 0xbebafeca
	fatMagic64 = 0xcafebabf
	fatCigam64 = 0xbfbafeca

	// maxFatArchs bounds nfat_arch; real files have a handful.
	maxFatArchs = 64
)

// FatSlice is one architecture in a universal file.
type FatSlice struct {
	CPU, SubCPU  uint32
	Offset, Size uint64
}

// Arch names the slice's architecture ("arm64", "x86_64", ...).
func (s FatSlice) Arch() string { return archName(s.CPU, s.SubCPU) }

// ReadFatSlices decodes a universal file's header. ok is false (and err nil)
// when r does not start with a fat magic. size bounds the slices (size < 0:
// unknown).
func ReadFatSlices(r io.ReaderAt, size int64) (slices []FatSlice, ok bool, err error) {
	var hdr [8]byte
	if n, err := r.ReadAt(hdr[:], 0); n < len(hdr) {
		if n >= 4 && !isFatMagic(binary.BigEndian.Uint32(hdr[:])) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("fat: reading header: %w", orEOF(err))
	}
	magic := binary.BigEndian.Uint32(hdr[:])
	if !isFatMagic(magic) {
		return nil, false, nil
	}
	if magic == fatCigam || magic == fatCigam64 {
		return nil, true, formatError(0, magic, "fat: little-endian fat header %#x is not valid", magic)
	}
	n := binary.BigEndian.Uint32(hdr[4:])
	if n == 0 || n > maxFatArchs {
		// 0xcafebabe is also the magic of Java class files, whose next
		// word is a version number (>= 45): say so.
		return nil, true, formatError(0, n, "fat: nfat_arch %d is not in [1, %d] (a Java class file?)", n, maxFatArchs)
	}
	entSize := 20
	if magic == fatMagic64 {
		entSize = 32
	}
	buf := make([]byte, int(n)*entSize)
	if got, err := r.ReadAt(buf, 8); got < len(buf) {
		return nil, true, fmt.Errorf("fat: reading %d fat_arch entries: %w", n, orEOF(err))
	}
	be := binary.BigEndian
	for i := 0; i < int(n); i++ {
		e := buf[i*entSize:]
		s := FatSlice{CPU: be.Uint32(e), SubCPU: be.Uint32(e[4:])}
		if magic == fatMagic64 {
			s.Offset, s.Size = be.Uint64(e[8:]), be.Uint64(e[16:])
		} else {
			s.Offset, s.Size = uint64(be.Uint32(e[8:])), uint64(be.Uint32(e[12:]))
		}
		if s.Offset+s.Size < s.Offset || s.Offset+s.Size > 1<<62 {
			return nil, true, formatError(uint64(8+i*entSize), s.Size, "fat: slice %d (%s): offset %#x + size %#x overflows", i, s.Arch(), s.Offset, s.Size)
		}
		if size >= 0 && s.Offset+s.Size > uint64(size) {
			return nil, true, formatError(uint64(8+i*entSize), s.Size, "fat: slice %d (%s): [%#x, %#x) runs past the end of the %d-byte file", i, s.Arch(), s.Offset, s.Offset+s.Size, size)
		}
		slices = append(slices, s)
	}
	return slices, true, nil
}

func isFatMagic(m uint32) bool {
	return m == fatMagic || m == fatCigam || m == fatMagic64 || m == fatCigam64
}
