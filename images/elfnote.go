package images

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/safefile"
)

// maxNoteBytes bounds how much of a note section or segment is read.
const maxNoteBytes = 1 << 16

// maxBuildIDRead bounds all that is read of a file for its build ID
// (headers, section names, notes), so that a hostile file's sizes cannot
// make the read long or large.
const maxBuildIDRead = 8 << 20

// ELFBuildID returns the GNU build ID of the ELF file at path as lowercase
// hex, or "" when the file has none. Only a regular file is opened (a
// FIFO or device a target put at a mapped path would block or act), and
// reads are bounded.
func ELFBuildID(path string) (string, error) {
	file, err := safefile.Open(path)
	if err != nil {
		return "", fmt.Errorf("build ID of %s: %w", path, err)
	}
	defer file.Close()
	f, err := objfile.NewELF(file, maxBuildIDRead)
	if err != nil {
		return "", fmt.Errorf("build ID of %s: %w", path, err)
	}
	return ELFFileBuildID(f), nil
}

// ELFFileBuildID returns the GNU build ID of an open ELF file, or "".
func ELFFileBuildID(f *elf.File) string {
	var readers []io.ReaderAt
	var sizes []uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_NOTE {
			readers, sizes = append(readers, p.Open().(io.ReaderAt)), append(sizes, p.Filesz)
		}
	}
	if s := f.Section(".note.gnu.build-id"); s != nil && s.Type == elf.SHT_NOTE {
		readers, sizes = append(readers, s.Open().(io.ReaderAt)), append(sizes, s.Size)
	}
	for i, r := range readers {
		n := min(sizes[i], maxNoteBytes)
		buf := make([]byte, n)
		m, _ := r.ReadAt(buf, 0)
		if id := findGNUBuildID(buf[:m], f.ByteOrder); id != "" {
			return id
		}
	}
	return ""
}

// findGNUBuildID scans ELF notes for NT_GNU_BUILD_ID (type 3, name "GNU").
func findGNUBuildID(b []byte, bo binary.ByteOrder) string {
	desc := findNote(b, bo, func(typ uint32, name, desc []byte) bool {
		return typ == 3 && string(name) == "GNU\x00" && len(desc) > 0
	})
	if desc == nil {
		return ""
	}
	return hex.EncodeToString(desc)
}

// findNote returns the description of the first ELF note in b that want
// takes, or nil; a note running past b ends the scan.
func findNote(b []byte, bo binary.ByteOrder, want func(typ uint32, name, desc []byte) bool) []byte {
	align := func(n uint32) uint64 { return (uint64(n) + 3) &^ 3 }
	for len(b) >= 12 {
		namesz, descsz, typ := bo.Uint32(b[0:]), bo.Uint32(b[4:]), bo.Uint32(b[8:])
		b = b[12:]
		nameEnd := align(namesz)
		if nameEnd > uint64(len(b)) {
			return nil
		}
		name := b[:namesz]
		b = b[nameEnd:]
		descEnd := align(descsz)
		if descEnd > uint64(len(b)) {
			return nil
		}
		desc := b[:descsz]
		b = b[descEnd:]
		if want(typ, name, desc) {
			return desc
		}
	}
	return nil
}
