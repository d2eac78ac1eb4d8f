// Package images models the object files loaded in a target (ELF and
// Mach-O images, where each is mapped, which file offset an address is)
// and decodes them from the bytes a backend hands over. It is portable, so
// that both backends' formats are tested on any OS.
package images

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/macprof/macprof/unwind"
)

// MemoryReader reads the target's memory. It is the same contract the
// unwinder uses.
type MemoryReader = unwind.MemoryReader

// Format is an object file format.
type Format uint8

// Object file formats.
const (
	FormatUnknown Format = iota
	FormatELF
	FormatMachO
)

// String names the format.
func (f Format) String() string {
	switch f {
	case FormatELF:
		return "ELF"
	case FormatMachO:
		return "Mach-O"
	}
	return "unknown"
}

// Image is one executable mapping of an object file in a target's address
// space. An address a in [Start, Limit) lies at file offset a-Start+Offset.
type Image struct {
	// Path is the object's path as the target knows it.
	Path string
	// OpenPath, when set, is where the profiler opens the file (for example
	// through /proc/PID/root for a target in another mount namespace).
	OpenPath string
	// MapFile, when set, is the kernel's link to the file the target maps
	// (/proc/PID/map_files/START-END on Linux): while the target lives,
	// it opens that file whatever the target has since put at Path.
	MapFile string
	// Dev and Inode identify the mapped file (from /proc/PID/maps), so
	// that a file opened at a path the target controls is checked to be
	// the one it maps (Open); zero when unknown.
	Dev, Inode uint64
	// BuildID identifies the object's contents: the GNU build ID (ELF) or
	// the LC_UUID (Mach-O), as lowercase hex without separators.
	BuildID string
	// Format is the object file format.
	Format Format
	// Start and Limit bound the mapping's runtime addresses.
	Start, Limit uint64
	// Offset is the file offset mapped at Start.
	Offset uint64
	// LoadAddress is the runtime address of the Mach-O header (Mach-O only).
	LoadAddress uint64
	// SharedCache is the UUID (lowercase hex, no dashes) of the dyld
	// shared cache the image is a dylib of (its header has
	// MH_DYLIB_IN_CACHE), as the target's dyld_all_image_infos names it;
	// empty for other images. It selects the on-disk cache whose
	// .symbols file names the image's local functions.
	SharedCache string
	// Memory, when non-nil, reads the target's memory, so that symbol tables
	// of images with no file on disk (the dyld shared cache) can be read from
	// the target itself.
	Memory MemoryReader
}

// Name returns the base name of the image's path.
func (im *Image) Name() string { return filepath.Base(im.Path) }

// Contains reports whether addr lies in the image's mapping.
func (im *Image) Contains(addr uint64) bool { return addr >= im.Start && addr < im.Limit }

// FileOffset returns the file offset of a runtime address inside the image.
func (im *Image) FileOffset(addr uint64) uint64 { return addr - im.Start + im.Offset }

// File returns the path to open the object file at.
func (im *Image) File() string {
	if im.OpenPath != "" {
		return im.OpenPath
	}
	return im.Path
}

// Key identifies the object file behind the image for caches shared across
// processes: the build ID when there is one, else the path.
func (im *Image) Key() string {
	if im.BuildID != "" {
		return "id:" + im.BuildID
	}
	return "path:" + im.File()
}

// String describes the image for messages.
func (im *Image) String() string {
	return fmt.Sprintf("%s [%#x-%#x) off %#x", im.Path, im.Start, im.Limit, im.Offset)
}

// Set is an immutable address-to-image index.
type Set struct {
	images []*Image // sorted by Start, non-overlapping
}

// NewSet indexes imgs by address. Images with an empty range are dropped;
// where two images overlap, the one that starts first wins the overlap.
func NewSet(imgs []*Image) *Set {
	s := make([]*Image, 0, len(imgs))
	for _, im := range imgs {
		if im != nil && im.Limit > im.Start {
			s = append(s, im)
		}
	}
	sort.SliceStable(s, func(i, j int) bool { return s[i].Start < s[j].Start })
	out := s[:0]
	for _, im := range s {
		if n := len(out); n > 0 && im.Start < out[n-1].Limit {
			continue
		}
		out = append(out, im)
	}
	return &Set{images: out}
}

// Lookup returns the image containing addr, or nil.
func (s *Set) Lookup(addr uint64) *Image {
	if s == nil {
		return nil
	}
	imgs := s.images
	lo, hi := 0, len(imgs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if imgs[m].Start <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return nil
	}
	if im := imgs[lo-1]; addr < im.Limit {
		return im
	}
	return nil
}

// Images returns the indexed images in address order. The slice must not be
// modified.
func (s *Set) Images() []*Image {
	if s == nil {
		return nil
	}
	return s.images
}

// Len returns the number of images.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.images)
}
