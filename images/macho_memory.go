package images

import (
	"fmt"
	"io"
)

// MemoryFile returns a reader of the image's file offsets for the image
// mapped in a target at the given slide: a file offset inside a segment's
// [fileoff, fileoff+filesize) is read from vmaddr+slide+(offset-fileoff).
// This is how __LINKEDIT is read from memory (linkedit_base = slide +
// linkedit.vmaddr - linkedit.fileoff), also for images in the dyld shared
// cache, whose file offsets are offsets in the cache file. size is the end
// of the highest segment's file range: the bound to give ReadSymbolTable.
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
	m, err := ReadMachOFromMemory(r, loadAddr)
	if err != nil {
		return nil, err
	}
	im, err := machOImage(m, loadAddr, path)
	if err != nil {
		return nil, fmt.Errorf("image %s at %#x: %w", path, loadAddr, err)
	}
	im.Memory = r
	return im, nil
}
