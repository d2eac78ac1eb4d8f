package images

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/safefile"
)

// MachOFile is one 64-bit image read from a file: a thin file, or the slice
// of a universal file chosen by architecture or UUID.
type MachOFile struct {
	*MachO
	// Path is the file's path.
	Path string
	// R reads the image: offset 0 is its mach_header_64 (the slice's
	// start in a universal file).
	R io.ReaderAt
	// Size is the image's size in bytes.
	Size int64

	closer io.Closer
}

// Close closes the file.
func (f *MachOFile) Close() error {
	if f.closer == nil {
		return nil
	}
	return f.closer.Close()
}

// HostArch is the Mach-O name of the architecture macprof runs on, which
// OpenMachO prefers in a universal file.
func HostArch() string {
	if runtime.GOARCH == "amd64" {
		return "x86_64"
	}
	return runtime.GOARCH
}

// OpenMachO opens the Mach-O image at path. For a universal file, arch
// chooses the slice ("arm64", "arm64e", "x86_64"); an empty arch takes the
// host's architecture when the file has it, else the first 64-bit slice.
// A thin file of another architecture than a non-empty arch is an error.
func OpenMachO(path, arch string) (*MachOFile, error) {
	return openMachO(path, func(m *MachO) bool { return arch == "" || archMatches(m.Arch(), arch) }, arch == "", "architecture "+arch)
}

// OpenMachOUUID opens the image at path whose LC_UUID is uuid (lowercase
// hex, as Image.BuildID), choosing the matching slice of a universal file.
// An empty uuid behaves as OpenMachO(path, "").
func OpenMachOUUID(path, uuid string) (*MachOFile, error) {
	if uuid == "" {
		return OpenMachO(path, "")
	}
	uuid = strings.ToLower(strings.ReplaceAll(uuid, "-", ""))
	return openMachO(path, func(m *MachO) bool { return m.UUIDString() == uuid }, false, "UUID "+uuid)
}

func archMatches(have, want string) bool {
	return have == want || (want == "arm64" && have == "arm64e")
}

func openMachO(path string, pick func(*MachO) bool, preferHost bool, what string) (*MachOFile, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("macho: %w", err)
	}
	size, data, err := objfile.DataSize(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("macho: %w", err)
	}
	mf, err := NewMachOFile(f, size, pick, preferHost, what)
	if err == nil {
		err = checkMachOData(mf.MachO, mf.Size, data)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	mf.Path = path
	mf.closer = f
	return mf, nil
}

// NewMachOFile reads the image in r (size bytes): the file itself when thin,
// else the slice of a universal file for which pick returns true (the host
// architecture's first when preferHost and pick accepts it). what describes
// pick for errors.
func NewMachOFile(r io.ReaderAt, size int64, pick func(*MachO) bool, preferHost bool, what string) (*MachOFile, error) {
	slices, fat, err := ReadFatSlices(r, size)
	if err != nil {
		return nil, err
	}
	if !fat {
		m, err := ReadMachO(r, size)
		if err != nil {
			return nil, err
		}
		if !pick(m) {
			return nil, fmt.Errorf("macho: the %s image does not match %s", m.Arch(), what)
		}
		return &MachOFile{MachO: m, R: r, Size: size}, nil
	}
	var cands []*MachOFile
	var have []string
	var errs []error
	for _, s := range slices {
		have = append(have, s.Arch())
		if s.CPU&cpuArch64 == 0 {
			continue // 32-bit slices are skipped, not fatal
		}
		sr := io.NewSectionReader(r, int64(s.Offset), int64(s.Size))
		m, err := ReadMachO(sr, int64(s.Size))
		if err != nil {
			errs = append(errs, fmt.Errorf("slice %s: %w", s.Arch(), err))
			continue
		}
		if pick(m) {
			cands = append(cands, &MachOFile{MachO: m, R: sr, Size: int64(s.Size)})
		}
	}
	if len(cands) == 0 {
		err := fmt.Errorf("macho: universal file has no 64-bit slice matching %s (slices: %s)", what, strings.Join(have, ", "))
		if len(errs) > 0 {
			err = fmt.Errorf("%w; %w", err, errors.Join(errs...))
		}
		return nil, err
	}
	if preferHost {
		for _, c := range cands {
			if archMatches(c.Arch(), HostArch()) {
				return c, nil
			}
		}
	}
	return cands[0], nil
}

// MachOImageFromFile opens the Mach-O file at path (the arch slice of a
// universal file, see OpenMachO) and describes it as an Image loaded at
// loadAddr, the runtime address of its header; loadAddr 0 means the
// link-time address (no slide). The Image's offsets are offsets from
// __TEXT's start, as for MachOImageFromMemory.
func MachOImageFromFile(path, arch string, loadAddr uint64) (*Image, *MachOFile, error) {
	f, err := OpenMachO(path, arch)
	if err != nil {
		return nil, nil, err
	}
	im, err := machOImage(f.MachO, loadAddr, path)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return im, f, nil
}

func machOImage(m *MachO, loadAddr uint64, path string) (*Image, error) {
	text := m.Text()
	if text == nil {
		return nil, formatError(0, nil, "no __TEXT segment")
	}
	if loadAddr == 0 {
		loadAddr = text.Addr
	}
	if loadAddr+text.Size < loadAddr {
		return nil, fmt.Errorf("macho: __TEXT of %#x bytes at %#x overflows", text.Size, loadAddr)
	}
	return &Image{
		Path:        path,
		BuildID:     m.UUIDString(),
		Format:      FormatMachO,
		Start:       loadAddr,
		Limit:       loadAddr + text.Size,
		Offset:      0,
		LoadAddress: loadAddr,
	}, nil
}

// Section types with no bytes in the file (mach-o/loader.h: SECTION_TYPE,
// S_ZEROFILL, S_GB_ZEROFILL, S_THREAD_LOCAL_ZEROFILL).
const (
	sectionTypeMask      = 0xff
	sZerofill            = 0x1
	sGBZerofill          = 0xc
	sThreadLocalZerofill = 0x12
)

// checkMachOData checks the sizes m's load commands give for what is read
// of a file (the symbol, string and function-starts tables, sections with
// file contents, such as __DWARF's) against the size bytes of its image, the
// data bytes its file holds (a sparse file's holes are no table) and the
// caps of objfile.
func checkMachOData(m *MachO, size, data int64) error {
	if st := m.Symtab; st != nil {
		if err := objfile.CheckRange("macho: LC_SYMTAB symbols", uint64(st.SymOff), uint64(st.NSyms)*nlistSize, size, data, objfile.MaxSymbolTable); err != nil {
			return err
		}
		if err := objfile.CheckRange("macho: LC_SYMTAB strings", uint64(st.StrOff), uint64(st.StrSize), size, data, objfile.MaxStringTable); err != nil {
			return err
		}
	}
	if fs := m.FunctionStarts; fs != nil {
		if err := objfile.CheckRange("macho: LC_FUNCTION_STARTS", uint64(fs.DataOff), uint64(fs.DataSize), size, data, objfile.MaxSymbolTable); err != nil {
			return err
		}
	}
	for i := range m.Sections {
		s := &m.Sections[i]
		if s.Offset == 0 || s.Flags&sectionTypeMask == sZerofill || s.Flags&sectionTypeMask == sGBZerofill || s.Flags&sectionTypeMask == sThreadLocalZerofill {
			continue // no bytes in the file
		}
		if err := objfile.CheckRange("macho: section "+s.Segment+","+s.Name, uint64(s.Offset), s.Size, size, data, objfile.MaxSection); err != nil {
			return err
		}
	}
	return nil
}

// DWARFReader returns f's image for debug/macho, which reads only DWARF
// from it, with its LC_SYMTAB and LC_DYSYMTAB commands reading as commands
// of no known kind: debug/macho.NewFile would build a Symbol for every
// entry and copy each name from its offset to its NUL, which a hostile
// table (millions of entries into one long unterminated run) makes cost
// entries x string table, and read an indirect symbol table of any size.
func (f *MachOFile) DWARFReader() *io.SectionReader {
	return io.NewSectionReader(&hiddenCmds{r: f.R, at: f.symtabCmds}, 0, f.Size)
}

// hiddenCmds reads r with the cmd field of the load commands at offsets at
// reading as zero.
type hiddenCmds struct {
	r  io.ReaderAt
	at []uint32
}

func (h *hiddenCmds) ReadAt(p []byte, off int64) (int, error) {
	n, err := h.r.ReadAt(p, off)
	for _, a := range h.at {
		for i := max(int64(a), off); i < min(int64(a)+4, off+int64(n)); i++ {
			p[i-off] = 0
		}
	}
	return n, err
}
