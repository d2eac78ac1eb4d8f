package images

import (
	"errors"
	"fmt"
	"io"
)

// MemoryFile returns a reader of the image's file offsets for the image
// mapped in a target at the given slide: a file offset inside a segment's
// [fileoff, fileoff+filesize) is read from vmaddr+slide+(offset-fileoff).
// It serves section contents (a Go binary's __gopclntab) of images outside
// the dyld shared cache, where file offsets are offsets in one file. It
// must not be used for __LINKEDIT blobs: in the shared cache each
// segment's fileoff is relative to the subcache file that holds it, so
// two segments' file ranges can overlap; use LinkeditMemory. size is the
// end of the highest segment's file range.
func (m *MachO) MemoryFile(r MemoryReader, slide uint64) (ra io.ReaderAt, size int64) {
	var end uint64
	for _, s := range m.Segments {
		if s.FileSize > 0 && s.Offset+s.FileSize > end {
			end = s.Offset + s.FileSize
		}
	}
	if end > 1<<62 {
		end = 1 << 62
	}
	return &memoryFile{r: r, segs: m.Segments, slide: slide}, int64(end)
}

type memoryFile struct {
	r     MemoryReader
	segs  []MachOSegment
	slide uint64
}

// ReadAt implements io.ReaderAt.
func (f *memoryFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("macho memory: negative offset %d", off)
	}
	done := 0
	for done < len(p) {
		o := uint64(off) + uint64(done)
		var seg *MachOSegment
		for i := range f.segs {
			s := &f.segs[i]
			if s.FileSize > 0 && o >= s.Offset && o-s.Offset < s.FileSize {
				seg = s
				break
			}
		}
		if seg == nil {
			return done, fmt.Errorf("macho memory: file offset %#x is in no segment: %w", o, io.ErrUnexpectedEOF)
		}
		n := min(uint64(len(p)-done), seg.FileSize-(o-seg.Offset))
		addr := seg.Addr + f.slide + (o - seg.Offset)
		if err := f.r.ReadMemory(addr, p[done:done+int(n)]); err != nil {
			return done, fmt.Errorf("macho memory: reading %d bytes of %s at %#x (file offset %#x): %w", n, seg.Name, addr, o, err)
		}
		done += int(n)
	}
	return done, nil
}

// ErrNoLinkedit is returned for an image in memory that has no __LINKEDIT
// segment: its symbol tables cannot be located.
var ErrNoLinkedit = errors.New("macho: no __LINKEDIT segment, so its symbol tables cannot be found in memory")

// LinkeditMemory reads the __LINKEDIT file offsets of an image mapped in a
// target at slide. It is an io.ReaderAt over file offsets, for
// ReadSymbolTable and ReadFunctionStarts.
//
// Every offset is resolved against __LINKEDIT alone, as dyld does: the
// blob at file offset off is at linkedit.vmaddr + slide + (off -
// linkedit.fileoff) (dyld-1378 common/MachOLoaded.cpp
// MachOLoaded::getLinkEditContent, with getLayoutInfo taking vmaddr and
// fileOffset from the segment named "__LINKEDIT"; common/MachOAnalyzer.cpp
// MachOAnalyzer::withVMLayout and getLinkeditLayout do the same for
// LC_SYMTAB's symoff and stroff). In the dyld shared cache __LINKEDIT's
// fileoff is relative to the subcache file holding the cache's linkedit,
// and __TEXT lives in another file, so mapping an offset to "the segment
// whose file range contains it" can land in __TEXT. An offset outside
// __LINKEDIT's file range is an error.
type LinkeditMemory struct {
	r     MemoryReader
	seg   MachOSegment
	slide uint64
}

// LinkeditMemory returns the reader of the image's __LINKEDIT, mapped at
// slide in the target r reads, or ErrNoLinkedit.
func (m *MachO) LinkeditMemory(r MemoryReader, slide uint64) (*LinkeditMemory, error) {
	s := m.Segment("__LINKEDIT")
	if s == nil {
		return nil, ErrNoLinkedit
	}
	return &LinkeditMemory{r: r, seg: *s, slide: slide}, nil
}

// Size returns the end of __LINKEDIT's file range: the bound to give
// ReadSymbolTable.
func (l *LinkeditMemory) Size() int64 { return int64(min(l.seg.Offset+l.seg.FileSize, 1<<62)) }

// Addr returns the runtime address of the n bytes at file offset off, or
// an error when they are not all inside __LINKEDIT's file range.
func (l *LinkeditMemory) Addr(off, n uint64) (uint64, error) {
	s := &l.seg
	if off < s.Offset || off-s.Offset > s.FileSize || n > s.FileSize-(off-s.Offset) {
		return 0, fmt.Errorf("macho memory: %d bytes at file offset %#x are outside __LINKEDIT's file range [%#x, %#x): %w",
			n, off, s.Offset, s.Offset+s.FileSize, io.ErrUnexpectedEOF)
	}
	return s.Addr + l.slide + (off - s.Offset), nil
}

// ReadAt implements io.ReaderAt over __LINKEDIT's file offsets.
func (l *LinkeditMemory) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("macho memory: negative offset %d", off)
	}
	addr, err := l.Addr(uint64(off), uint64(len(p)))
	if err != nil {
		return 0, err
	}
	if err := l.r.ReadMemory(addr, p); err != nil {
		return 0, fmt.Errorf("macho memory: reading %d bytes of __LINKEDIT at %#x (file offset %#x): %w", len(p), addr, off, err)
	}
	return len(p), nil
}

// ReadMachOFromMemory reads and decodes the header and load commands of the
// image whose mach_header_64 is at addr in a target.
func ReadMachOFromMemory(r MemoryReader, addr uint64) (*MachO, error) {
	var hdr [machoHeaderSize]byte
	if err := r.ReadMemory(addr, hdr[:]); err != nil {
		return nil, fmt.Errorf("macho at %#x: reading header: %w", addr, err)
	}
	_, _, sizeofcmds, err := parseMachOHeader(hdr[:])
	if err != nil {
		return nil, fmt.Errorf("at %#x: %w", addr, err)
	}
	// Read the commands a page at a time, so that a hostile sizeofcmds
	// costs only what the target really has mapped.
	buf := make([]byte, machoHeaderSize, machoHeaderSize+min(int(sizeofcmds), 16<<10))
	copy(buf, hdr[:])
	for rest := int(sizeofcmds); rest > 0; {
		k := min(rest, 16<<10)
		start := len(buf)
		buf = append(buf, make([]byte, k)...)
		if err := r.ReadMemory(addr+uint64(start), buf[start:]); err != nil {
			return nil, fmt.Errorf("macho at %#x: reading %d bytes of load commands: %w", addr, sizeofcmds, err)
		}
		rest -= k
	}
	m, err := ParseMachO(buf)
	if err != nil {
		return nil, fmt.Errorf("at %#x: %w", addr, err)
	}
	return m, nil
}

// MachOImageFromMemory describes the image whose header is at loadAddr in a
// target: Start and Limit are the runtime range of its __TEXT segment,
// Offset is 0 (an address maps to its offset from __TEXT's start, which is
// its file offset for every image outside the dyld shared cache), BuildID is
// its UUID, and Memory is r, so that its symbols are read from the target.
func MachOImageFromMemory(r MemoryReader, loadAddr uint64, path string) (*Image, error) {
	im, _, err := machOImageFromMemory(r, loadAddr, path)
	return im, err
}

func machOImageFromMemory(r MemoryReader, loadAddr uint64, path string) (*Image, *MachO, error) {
	m, err := ReadMachOFromMemory(r, loadAddr)
	if err != nil {
		return nil, nil, err
	}
	im, err := machOImage(m, loadAddr, path)
	if err != nil {
		return nil, nil, fmt.Errorf("image %s at %#x: %w", path, loadAddr, err)
	}
	im.Memory = r
	return im, m, nil
}
