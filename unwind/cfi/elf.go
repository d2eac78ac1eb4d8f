package cfi

import (
	"debug/elf"
	"fmt"
	"runtime"

	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/internal/safefile"
	"github.com/macprof/macprof/unwind"
)

// maxSectionBytes bounds each call-frame section read (libpython's
// .eh_frame is about 1 MiB, libLLVM's 5 MiB).
const maxSectionBytes = objfile.MaxFrameSection

// maxFileRead bounds all that is read of one file: headers, the two
// call-frame sections and .eh_frame_hdr (read only when no larger than
// half of .eh_frame, all a header of its FDEs needs).
const maxFileRead = 3*maxSectionBytes + 16<<20

// Load builds the table of the ELF object at path. Only a regular file is
// opened, its sections' sizes are checked against what it holds, and reads
// are bounded. The call-frame sections are read in place from a read-only
// mapping of the file (objfile.MapELF), not copied: where .eh_frame_hdr
// indexes .eh_frame, the table keeps the mapping, unmapped once the table
// is unreachable, and a lookup compiles only the FDE it needs from it.
func Load(path string) (*Table, error) {
	file, err := safefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cfi: %w", err)
	}
	defer file.Close()
	f, m, err := objfile.MapELF(file, maxFileRead)
	if err != nil {
		return nil, fmt.Errorf("cfi: %s: %w", path, err)
	}
	t, err := fromMapping(f, m)
	if t != nil && t.lazy != nil && t.lazy.mapped {
		runtime.AddCleanup(t.lazy, func(m *objfile.Mapping) { m.Close() }, m)
	} else {
		m.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("cfi: %s: %w", path, err)
	}
	return t, nil
}

// fromMapping is FromELF reading f's sections in place from m, its
// mapping (nil: copied); a fault of the mapping (the file shrank) is an
// error.
func fromMapping(f *elf.File, m *objfile.Mapping) (t *Table, err error) {
	defer objfile.RecoverFault(&err, objfile.PanicOnFault())
	return fromELF(f, m, true)
}

// FromELF builds the table of an open 64-bit little-endian ELF object
// (amd64 or arm64) from its .eh_frame and .debug_frame: .eh_frame indexed
// through .eh_frame_hdr and compiled FDE by FDE as lookups meet them where
// the header allows, else with the rest (Build). A Go binary, which keeps
// frame pointers, gets a table that says so, with the rows of its
// .debug_frame for LeafRule.
func FromELF(f *elf.File) (*Table, error) { return fromELF(f, nil, true) }

// fromELF is FromELF, reading sections in place from m, f's mapping, when
// not nil (read them with objfile.PanicOnFault set); with index false it
// compiles every FDE at once (Build), as the tests that compare the two
// do.
func fromELF(f *elf.File, m *objfile.Mapping, index bool) (*Table, error) {
	var arch unwind.Arch
	switch f.Machine {
	case elf.EM_X86_64:
		arch = unwind.ArchAMD64
	case elf.EM_AARCH64:
		arch = unwind.ArchARM64
	default:
		return nil, fmt.Errorf("unsupported machine %v", f.Machine)
	}
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		return nil, fmt.Errorf("unsupported ELF class %v, %v", f.Class, f.Data)
	}
	var segs []Segment
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			segs = append(segs, Segment{Vaddr: p.Vaddr, Size: p.Filesz, Off: p.Off})
		}
	}
	if f.Section(".gopclntab") != nil || f.Section(".go.buildinfo") != nil {
		// Frame pointers, and the rows of Go's .debug_frame (the SP
		// deltas of its pcsp tables; none under -ldflags=-w) for the
		// interrupted frame's CFA alone (LeafRule).
		t := &Table{arch: arch}
		if data, addr, ok := sectionData(f, m, ".debug_frame", maxSectionBytes); ok {
			t = Build(arch, []Section{{Data: data, Addr: addr}}, segs)
		}
		t.framePointers = true
		return t, nil
	}
	var secs []Section
	for _, name := range []string{".eh_frame", ".debug_frame"} {
		if data, addr, ok := sectionData(f, m, name, maxSectionBytes); ok {
			secs = append(secs, Section{Data: data, Addr: addr, EH: name == ".eh_frame"})
		}
	}
	if index && len(secs) > 0 && secs[0].EH {
		// A header of .eh_frame's FDEs takes at most half its size.
		if hdr, addr, ok := sectionData(f, m, ".eh_frame_hdr", uint64(len(secs[0].Data)/2+64)); ok {
			if x := indexOf(arch, secs[0], hdr, addr, segs, m != nil); x != nil {
				// Only the index keeps .eh_frame and its
				// header: Build copies what it compiles.
				t := Build(arch, secs[1:], segs)
				t.lazy = x
				return t, nil
			}
		}
	}
	return Build(arch, secs, segs), nil
}

// sectionData returns the section called name, if it has bytes in the
// file and no more than limit: in place from m when not nil, else read.
func sectionData(f *elf.File, m *objfile.Mapping, name string, limit uint64) (data []byte, addr uint64, ok bool) {
	s := f.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size > limit {
		return nil, 0, false
	}
	data, err := objfile.SectionBytes(m, s)
	if err != nil {
		return nil, 0, false
	}
	return data, s.Addr, true
}

// Build compiles every FDE of call-frame sections into a table. Where FDEs
// overlap, the one that starts first wins, the earlier section's where two
// start together; segs map their addresses to file offsets (FDEs outside
// every segment are dropped).
func Build(arch unwind.Arch, secs []Section, segs []Segment) *Table {
	var spans []span
	for _, s := range secs {
		spans = parseSection(arch, s, segs, spans)
	}
	return compile(arch, spans)
}
