package images

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"

	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/safefile"
)

// GoInfo says whether an image is a Go program and gives its Go build ID.
type GoInfo struct {
	// Go marks an image that has a Go function table (pclntab): its code
	// is Go's, cgo's C code aside.
	Go bool
	// BuildID is the Go build ID (`go tool buildid`), "" when unknown.
	BuildID string
}

// GoImage reads the Go information of the image's file: from an ELF file,
// the .gopclntab section and the Go build ID note (.note.go.buildid); from a
// Mach-O file (the slice whose UUID is the image's BuildID), the __gopclntab
// section and the build ID Go's linker writes at the start of __text. Only
// a regular file is opened, and reads are bounded.
func GoImage(img *Image) (GoInfo, error) {
	switch img.Format {
	case FormatELF:
		return elfGoImage(img.File())
	case FormatMachO:
		return machOGoImage(img.File(), img.BuildID)
	}
	return GoInfo{}, nil
}

func elfGoImage(path string) (GoInfo, error) {
	file, err := safefile.Open(path)
	if err != nil {
		return GoInfo{}, fmt.Errorf("images: Go build ID of %s: %w", path, err)
	}
	defer file.Close()
	f, err := objfile.NewELF(file, maxBuildIDRead)
	if err != nil {
		return GoInfo{}, fmt.Errorf("images: Go build ID of %s: %w", path, err)
	}
	var info GoInfo
	info.Go = f.Section(".gopclntab") != nil || f.Section(".data.rel.ro.gopclntab") != nil
	if s := f.Section(".note.go.buildid"); s != nil && s.Type == elf.SHT_NOTE {
		buf := make([]byte, min(s.Size, maxNoteBytes))
		n, _ := s.ReadAt(buf, 0)
		info.BuildID = findGoBuildIDNote(buf[:n], f.ByteOrder)
		info.Go = info.Go || info.BuildID != ""
	}
	return info, nil
}

// findGoBuildIDNote scans ELF notes for the Go build ID note (type 4, name
// "Go"), as cmd/link writes it.
func findGoBuildIDNote(b []byte, bo binary.ByteOrder) string {
	return string(findNote(b, bo, func(typ uint32, name, desc []byte) bool {
		return typ == 4 && string(name) == "Go\x00\x00" && len(desc) > 0 && printableID(desc)
	}))
}

// goBuildIDPrefix and goBuildIDSuffix frame the build ID Go's linker writes
// at the start of a Mach-O's text (cmd/internal/buildid).
var goBuildIDPrefix, goBuildIDSuffix = []byte("\xff Go build ID: \""), []byte("\"\n \xff")

// maxGoTextID bounds what is read of __text for the build ID.
const maxGoTextID = 256

func machOGoImage(path, uuid string) (GoInfo, error) {
	f, err := OpenMachOUUID(path, uuid)
	if err != nil {
		return GoInfo{}, fmt.Errorf("images: Go build ID of %s: %w", path, err)
	}
	defer f.Close()
	var info GoInfo
	for _, s := range f.MachO.Sections {
		switch s.Name {
		case "__gopclntab":
			info.Go = true
		case "__text":
			if s.Segment != "__TEXT" {
				continue
			}
			buf := make([]byte, min(s.Size, maxGoTextID))
			n, _ := f.R.ReadAt(buf, int64(s.Offset))
			info.BuildID = goTextBuildID(buf[:n])
		}
	}
	info.Go = info.Go || info.BuildID != ""
	return info, nil
}

// goTextBuildID returns the build ID at the start of a Go program's text,
// "" when there is none.
func goTextBuildID(b []byte) string {
	if !bytes.HasPrefix(b, goBuildIDPrefix) {
		return ""
	}
	b = b[len(goBuildIDPrefix):]
	end := bytes.Index(b, goBuildIDSuffix)
	if end <= 0 || !printableID(b[:end]) {
		return ""
	}
	return string(b[:end])
}

// printableID reports whether b is a plausible build ID: printable ASCII
// without quotes or spaces.
func printableID(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || c == '"' {
			return false
		}
	}
	return true
}
