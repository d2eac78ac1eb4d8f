package images

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// Mach-O constants from <mach-o/loader.h>, <mach-o/nlist.h> and
// <mach/machine.h>.
const (
	machoMagic32    = 0xfeedface
	machoCigam32    = 0xcefaedfe
	machoMagic64    = 0xfeedfacf
	machoCigam64    = 0xcffaedfe
	machoHeaderSize = 32 // sizeof(struct mach_header_64)

	lcSegment64      = 0x19
	lcSegment        = 0x1
	lcSymtab         = 0x2
	lcDysymtab       = 0xb
	lcUUID           = 0x1b
	lcFunctionStarts = 0x26

	segmentCmdSize = 72 // sizeof(struct segment_command_64)
	sectionSize    = 80 // sizeof(struct section_64)
	nlistSize      = 16 // sizeof(struct nlist_64)

	// CPU types.
	cpuArch64    = 0x01000000
	cpuTypeX86   = 7
	cpuTypeARM   = 12
	cpuTypeX8664 = cpuTypeX86 | cpuArch64
	cpuTypeARM64 = cpuTypeARM | cpuArch64

	// Section attributes: the section holds machine instructions.
	sAttrPureInstructions = 0x80000000
	sAttrSomeInstructions = 0x00000400

	// maxLoadCommandBytes bounds sizeofcmds: real images have well under
	// 1 MiB of load commands.
	maxLoadCommandBytes = 4 << 20
	// maxSegments bounds how many segments and sections an image may have.
	maxSections = 1 << 16
)

// Symbol table type bits (<mach-o/nlist.h>).
const (
	// NStab masks the bits of a debugging (stab) entry.
	NStab = 0xe0
	// NType masks the type bits.
	NType = 0x0e
	// NExt marks an external symbol.
	NExt = 0x01
	// NSect is the type of a symbol defined in section NSect of the image.
	NSect = 0x0e
	// ReferencedDynamically is the n_desc bit set on __mh_execute_header
	// and other symbols that must survive strip; none of them is a function.
	ReferencedDynamically = 0x0010
)

// ErrMachO32 is returned for 32-bit Mach-O images, which macprof does not
// support (macOS has not run 32-bit code since 10.15).
var ErrMachO32 = errors.New("32-bit Mach-O is not supported (only 64-bit arm64 and x86_64 images)")

// MachO is the decoded header and load commands of one 64-bit Mach-O image
// (a thin file, one slice of a universal file, or an image in memory).
type MachO struct {
	// CPU and SubCPU are the header's cputype and cpusubtype.
	CPU, SubCPU uint32
	// FileType is the header's filetype (MH_EXECUTE 2, MH_DYLIB 6, ...).
	FileType uint32
	// Flags are the header's flags.
	Flags uint32
	// UUID is the LC_UUID, when HasUUID.
	UUID    [16]byte
	HasUUID bool
	// Segments are the LC_SEGMENT_64 commands in load order.
	Segments []MachOSegment
	// Sections are the sections of all segments, in order; n_sect in a
	// symbol is an index into Sections plus one.
	Sections []MachOSection
	// Symtab is the LC_SYMTAB command, or nil.
	Symtab *MachOSymtab
	// FunctionStarts locates LC_FUNCTION_STARTS data in the file, or is
	// nil.
	FunctionStarts *MachOLinkeditData
	// symtabCmds are the offsets of the LC_SYMTAB and LC_DYSYMTAB
	// commands from the header (DWARFReader hides them).
	symtabCmds []uint32
}

// MachOSegment is one LC_SEGMENT_64.
type MachOSegment struct {
	Name             string
	Addr, Size       uint64 // vmaddr, vmsize
	Offset, FileSize uint64 // fileoff, filesize
	MaxProt          uint32
	InitProt         uint32
	Flags            uint32
}

// MachOSection is one section_64.
type MachOSection struct {
	Name, Segment string
	Addr, Size    uint64
	Offset        uint32
	Flags         uint32
}

// Instructions reports whether the section holds machine instructions.
func (s *MachOSection) Instructions() bool {
	return s.Flags&(sAttrPureInstructions|sAttrSomeInstructions) != 0
}

// MachOSymtab is LC_SYMTAB: where the symbol and string tables are in the
// file.
type MachOSymtab struct {
	SymOff, NSyms, StrOff, StrSize uint32
}

// MachOLinkeditData is a linkedit_data_command: a blob in __LINKEDIT.
type MachOLinkeditData struct {
	DataOff, DataSize uint32
}

// Arch names the image's architecture as Apple's tools do ("arm64",
// "arm64e", "x86_64"), or "cpu(N)".
func (m *MachO) Arch() string { return archName(m.CPU, m.SubCPU) }

func archName(cpu, sub uint32) string {
	switch cpu {
	case cpuTypeARM64:
		if sub&0xff == 2 {
			return "arm64e"
		}
		return "arm64"
	case cpuTypeX8664:
		return "x86_64"
	case cpuTypeARM:
		return "arm"
	case cpuTypeX86:
		return "i386"
	}
	return fmt.Sprintf("cpu(%#x)", cpu)
}

// UUIDString returns the UUID as lowercase hex without dashes, the form
// Image.BuildID uses, or "" when there is none.
func (m *MachO) UUIDString() string {
	if !m.HasUUID {
		return ""
	}
	return hex.EncodeToString(m.UUID[:])
}

// Segment returns the named segment, or nil.
func (m *MachO) Segment(name string) *MachOSegment {
	for i := range m.Segments {
		if m.Segments[i].Name == name {
			return &m.Segments[i]
		}
	}
	return nil
}

// Text returns the __TEXT segment, or nil.
func (m *MachO) Text() *MachOSegment { return m.Segment("__TEXT") }

// Slide returns the ASLR slide of the image when its header is at loadAddr:
// loadAddr minus the link-time address of __TEXT (where the header is).
func (m *MachO) Slide(loadAddr uint64) (uint64, error) {
	t := m.Text()
	if t == nil {
		return 0, formatError(0, nil, "no __TEXT segment")
	}
	return loadAddr - t.Addr, nil
}

// parseMachOHeader decodes and checks a mach_header_64.
func parseMachOHeader(b []byte) (m *MachO, ncmds, sizeofcmds uint32, err error) {
	if len(b) < 4 {
		return nil, 0, 0, formatError(0, len(b), "%d bytes is too short for a header", len(b))
	}
	switch magic := binary.LittleEndian.Uint32(b); magic {
	case machoMagic64:
	case machoMagic32, machoCigam32:
		return nil, 0, 0, fmt.Errorf("macho: %w", ErrMachO32)
	case machoCigam64:
		return nil, 0, 0, errors.New("macho: big-endian 64-bit Mach-O is not supported")
	case fatMagic, fatCigam, fatMagic64, fatCigam64:
		return nil, 0, 0, errors.New("macho: universal (fat) file: choose an architecture slice first")
	default:
		return nil, 0, 0, formatError(0, magic, "bad magic %#x", magic)
	}
	if len(b) < machoHeaderSize {
		return nil, 0, 0, formatError(0, len(b), "%d bytes is too short for a mach_header_64", len(b))
	}
	le := binary.LittleEndian
	m = &MachO{
		CPU:      le.Uint32(b[4:]),
		SubCPU:   le.Uint32(b[8:]),
		FileType: le.Uint32(b[12:]),
		Flags:    le.Uint32(b[24:]),
	}
	if m.CPU&cpuArch64 == 0 {
		return nil, 0, 0, fmt.Errorf("macho: cputype %s in a 64-bit header: %w", m.Arch(), ErrMachO32)
	}
	ncmds, sizeofcmds = le.Uint32(b[16:]), le.Uint32(b[20:])
	if sizeofcmds > maxLoadCommandBytes {
		return nil, 0, 0, formatError(0, sizeofcmds, "sizeofcmds %d exceeds the limit of %d", sizeofcmds, maxLoadCommandBytes)
	}
	if uint64(ncmds)*8 > uint64(sizeofcmds) {
		return nil, 0, 0, formatError(0, ncmds, "ncmds %d cannot fit in sizeofcmds %d", ncmds, sizeofcmds)
	}
	return m, ncmds, sizeofcmds, nil
}

// ParseMachO decodes the header and load commands at the start of b, which
// must hold at least the header and sizeofcmds bytes of load commands.
func ParseMachO(b []byte) (*MachO, error) {
	m, ncmds, sizeofcmds, err := parseMachOHeader(b)
	if err != nil {
		return nil, err
	}
	if uint64(len(b)) < machoHeaderSize+uint64(sizeofcmds) {
		return nil, formatError(0, sizeofcmds, "sizeofcmds %d runs past the %d bytes available", sizeofcmds, len(b)-machoHeaderSize)
	}
	le := binary.LittleEndian
	cmds := b[machoHeaderSize : machoHeaderSize+sizeofcmds]
	off := uint32(0)
	for i := uint32(0); i < ncmds; i++ {
		lcOff := uint64(machoHeaderSize + off)
		if len(cmds)-int(off) < 8 {
			return nil, formatError(lcOff, ncmds, "load command %d of ncmds %d: truncated", i, ncmds)
		}
		cmd, size := le.Uint32(cmds[off:]), le.Uint32(cmds[off+4:])
		if size < 8 {
			return nil, formatError(lcOff, size, "load command %d (%#x): cmdsize %d is less than 8", i, cmd, size)
		}
		if uint64(off)+uint64(size) > uint64(len(cmds)) {
			return nil, formatError(lcOff, size, "load command %d (%#x): cmdsize %d runs past sizeofcmds", i, cmd, size)
		}
		c := cmds[off : off+size]
		var err error
		if cmd == lcSymtab || cmd == lcDysymtab {
			m.symtabCmds = append(m.symtabCmds, machoHeaderSize+off)
		}
		switch cmd {
		case lcSegment64:
			err = m.parseSegment(c, lcOff)
		case lcSegment:
			err = fmt.Errorf("LC_SEGMENT: %w", ErrMachO32)
		case lcSymtab:
			if len(c) < 24 {
				err = formatError(lcOff, len(c), "LC_SYMTAB: cmdsize %d < 24", len(c))
				break
			}
			if m.Symtab != nil {
				err = formatError(lcOff, nil, "LC_SYMTAB: more than one")
				break
			}
			m.Symtab = &MachOSymtab{SymOff: le.Uint32(c[8:]), NSyms: le.Uint32(c[12:]), StrOff: le.Uint32(c[16:]), StrSize: le.Uint32(c[20:])}
		case lcUUID:
			if len(c) < 24 {
				err = formatError(lcOff, len(c), "LC_UUID: cmdsize %d < 24", len(c))
				break
			}
			copy(m.UUID[:], c[8:24])
			m.HasUUID = true
		case lcFunctionStarts:
			if len(c) < 16 {
				err = formatError(lcOff, len(c), "LC_FUNCTION_STARTS: cmdsize %d < 16", len(c))
				break
			}
			m.FunctionStarts = &MachOLinkeditData{DataOff: le.Uint32(c[8:]), DataSize: le.Uint32(c[12:])}
		}
		if fe, ok := err.(*FormatError); ok {
			fe.Msg = fmt.Sprintf("load command %d: %s", i, fe.Msg)
			return nil, fe
		} else if err != nil {
			return nil, fmt.Errorf("macho: load command %d at offset %#x: %w", i, lcOff, err)
		}
		off += size
	}
	if err := m.checkSegments(); err != nil {
		return nil, err
	}
	return m, nil
}

// parseSegment decodes the LC_SEGMENT_64 c, at offset off in the image.
func (m *MachO) parseSegment(c []byte, off uint64) error {
	le := binary.LittleEndian
	if len(c) < segmentCmdSize {
		return formatError(off, len(c), "LC_SEGMENT_64: cmdsize %d < %d", len(c), segmentCmdSize)
	}
	s := MachOSegment{
		Name:     cstring(c[8:24]),
		Addr:     le.Uint64(c[24:]),
		Size:     le.Uint64(c[32:]),
		Offset:   le.Uint64(c[40:]),
		FileSize: le.Uint64(c[48:]),
		MaxProt:  le.Uint32(c[56:]),
		InitProt: le.Uint32(c[60:]),
		Flags:    le.Uint32(c[68:]),
	}
	nsects := le.Uint32(c[64:])
	if uint64(nsects)*sectionSize > uint64(len(c)-segmentCmdSize) {
		return formatError(off, nsects, "LC_SEGMENT_64 %q: %d sections do not fit in cmdsize %d", s.Name, nsects, len(c))
	}
	if s.Addr+s.Size < s.Addr {
		return formatError(off, s.Size, "LC_SEGMENT_64 %q: vmaddr %#x + vmsize %#x overflows", s.Name, s.Addr, s.Size)
	}
	if s.Offset+s.FileSize < s.Offset {
		return formatError(off, s.FileSize, "LC_SEGMENT_64 %q: fileoff %#x + filesize %#x overflows", s.Name, s.Offset, s.FileSize)
	}
	if len(m.Sections)+int(nsects) > maxSections {
		return formatError(off, nsects, "LC_SEGMENT_64 %q: more than %d sections in the image", s.Name, maxSections)
	}
	for i := uint32(0); i < nsects; i++ {
		b := c[segmentCmdSize+i*sectionSize:]
		sec := MachOSection{
			Name:    cstring(b[0:16]),
			Segment: cstring(b[16:32]),
			Addr:    le.Uint64(b[32:]),
			Size:    le.Uint64(b[40:]),
			Offset:  le.Uint32(b[48:]),
			Flags:   le.Uint32(b[64:]),
		}
		if sec.Addr+sec.Size < sec.Addr {
			return formatError(off, sec.Size, "section %s,%s: addr %#x + size %#x overflows", sec.Segment, sec.Name, sec.Addr, sec.Size)
		}
		m.Sections = append(m.Sections, sec)
	}
	m.Segments = append(m.Segments, s)
	return nil
}

// checkSegments rejects images whose segments overlap in memory: the
// address-to-segment mapping would be ambiguous. The error is at the
// header's offset, since two load commands contradict each other.
func (m *MachO) checkSegments() error {
	for i := range m.Segments {
		a := &m.Segments[i]
		if a.Size == 0 {
			continue
		}
		for j := i + 1; j < len(m.Segments); j++ {
			b := &m.Segments[j]
			if b.Size == 0 {
				continue
			}
			if a.Addr < b.Addr+b.Size && b.Addr < a.Addr+a.Size {
				return formatError(0, b.Name, "segments %q [%#x-%#x) and %q [%#x-%#x) overlap", a.Name, a.Addr, a.Addr+a.Size, b.Name, b.Addr, b.Addr+b.Size)
			}
		}
	}
	return nil
}

func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// ReadMachO reads and decodes the header and load commands of the thin
// 64-bit image at the start of r, which holds size bytes (size < 0:
// unknown).
func ReadMachO(r io.ReaderAt, size int64) (*MachO, error) {
	var hdr [machoHeaderSize]byte
	n, rerr := r.ReadAt(hdr[:], 0)
	if n < 4 {
		return nil, fmt.Errorf("macho: reading header: %w", orEOF(rerr))
	}
	_, _, sizeofcmds, err := parseMachOHeader(hdr[:n])
	if err != nil {
		return nil, err
	}
	if size >= 0 && int64(sizeofcmds) > size-machoHeaderSize {
		return nil, formatError(0, sizeofcmds, "sizeofcmds %d runs past the end of the %d-byte image", sizeofcmds, size)
	}
	buf := make([]byte, machoHeaderSize+int(sizeofcmds))
	copy(buf, hdr[:])
	if _, err := r.ReadAt(buf[machoHeaderSize:], machoHeaderSize); err != nil {
		return nil, fmt.Errorf("macho: reading %d bytes of load commands: %w", sizeofcmds, orEOF(err))
	}
	return ParseMachO(buf)
}

func orEOF(err error) error {
	if err == nil || err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
