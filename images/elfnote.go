package images

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"

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

// headBytes is how much of a file fileBuildID reads at once: the ELF
// header, the program headers and, in linkers' usual layout, the notes.
const headBytes = 4096

// fileBuildID returns the GNU build ID of the ELF file f, or "". It reads
// the notes of the program headers (PT_NOTE) from the file's first page,
// one read where the headers and notes lie there (as linkers put them), so
// that a snapshot's build-ID checks of each object cost no parse of its
// section headers; a file whose segments hold no build ID, or whose
// headers lie elsewhere, is read as ELFBuildID reads it (the sections'
// .note.gnu.build-id too).
func fileBuildID(f *os.File) (string, error) {
	if id, ok := segmentBuildID(f); ok {
		return id, nil
	}
	ef, err := objfile.NewELF(f, maxBuildIDRead)
	if err != nil {
		return "", err
	}
	return ELFFileBuildID(ef), nil
}

// segmentBuildID returns the GNU build ID of the PT_NOTE segments of r, an
// ELF file; ok is false when it has none there or cannot tell without
// parsing the file's sections.
func segmentBuildID(r io.ReaderAt) (id string, ok bool) {
	var head [headBytes]byte
	n, err := r.ReadAt(head[:], 0)
	if err != nil && err != io.EOF {
		return "", false
	}
	b := head[:n]
	if len(b) < 52 || string(b[:4]) != elf.ELFMAG {
		return "", false
	}
	var bo binary.ByteOrder
	switch elf.Data(b[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		bo = binary.BigEndian
	default:
		return "", false
	}
	// Where the program headers are and what each holds: type, then
	// the offset and size of its bytes in the file.
	var phoff, entsize, num uint64
	var offAt, sizeAt int
	switch elf.Class(b[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
		if len(b) < 64 {
			return "", false
		}
		phoff, entsize, num = bo.Uint64(b[32:]), uint64(bo.Uint16(b[54:])), uint64(bo.Uint16(b[56:]))
		offAt, sizeAt = 8, 32
	case elf.ELFCLASS32:
		phoff, entsize, num = uint64(bo.Uint32(b[28:])), uint64(bo.Uint16(b[42:])), uint64(bo.Uint16(b[44:]))
		offAt, sizeAt = 4, 16
	default:
		return "", false
	}
	if entsize < uint64(sizeAt)+8 || num == 0 || num == 0xffff || phoff > uint64(len(b)) || num*entsize > uint64(len(b))-phoff {
		return "", false
	}
	word := func(p []byte) uint64 {
		if sizeAt == 32 {
			return bo.Uint64(p)
		}
		return uint64(bo.Uint32(p))
	}
	for i := uint64(0); i < num; i++ {
		ph := b[phoff+i*entsize:]
		if elf.ProgType(bo.Uint32(ph)) != elf.PT_NOTE {
			continue
		}
		off, size := word(ph[offAt:]), min(word(ph[sizeAt:]), maxNoteBytes)
		var note []byte
		if off <= uint64(len(b)) && size <= uint64(len(b))-off {
			note = b[off : off+size]
		} else {
			note = make([]byte, size)
			m, _ := r.ReadAt(note, int64(min(off, 1<<62)))
			note = note[:m]
		}
		if id := findGNUBuildID(note, bo); id != "" {
			return id, true
		}
	}
	return "", false
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
