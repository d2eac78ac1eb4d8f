package compact

import (
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/unwind"
	"github.com/macprof/macprof/unwind/cfi"
)

// Table is the compiled, read-only rule table of one image: function
// starts sorted for binary search, each with the index of its decoded
// rule (functions share the few distinct encodings an image has). It holds
// no pointers into the section it came from and may be shared by
// concurrent lookups.
type Table struct {
	arch   unwind.Arch
	starts []uint32      // entry starts, sorted; starts[i] <= starts[i+1]
	rule   []uint16      // index in rules per entry
	rules  []Decoded     // distinct decoded rules, Start and End zero
	walk   []unwind.Rule // walk[i] is rules[i] as a walk takes it
	end    uint32        // end of the last range
	// The DWARF-mode rules' FDEs: dwarf[i] is rules[i]'s slot in eh (-1:
	// none), dwarfOffs the slots' __eh_frame offsets; eh is nil until the
	// image's __eh_frame is read (withEHFrame), and where it has none.
	dwarf     []int32
	dwarfOffs []uint32
	eh        *cfi.FDEs
}

// maxRules bounds the distinct rules of a table (indexes are 16 bits);
// real images have a few hundred at most.
const maxRules = 1 << 16

// NewTable compiles a parsed section for arch. text reads the image at an
// image offset (the x86_64 _STACK_IND rules need the immediate of the
// function's own "sub $n, %rsp"); it may be nil when there is none.
func NewTable(s *Section, arch unwind.Arch, text func(off uint32) (uint32, bool)) (*Table, error) {
	if arch != unwind.ArchARM64 && arch != unwind.ArchAMD64 {
		return nil, fmt.Errorf("compact: unsupported architecture %v", arch)
	}
	n := len(s.Entries)
	t := &Table{arch: arch, starts: make([]uint32, n), rule: make([]uint16, n), end: s.End}
	type key struct{ enc, size uint32 }
	index := map[key]uint16{}
	for i, e := range s.Entries {
		t.starts[i] = e.Start
		k := key{enc: e.Encoding}
		if arch == unwind.ArchAMD64 {
			k.size = indirectSize(e.Start, e.Encoding, text)
		}
		ri, ok := index[k]
		if !ok {
			if len(t.rules) == maxRules {
				return nil, fmt.Errorf("compact: more than %d distinct unwind rules", maxRules)
			}
			ri = uint16(len(t.rules))
			index[k] = ri
			t.rules = append(t.rules, decode(arch, 0, 0, k.enc, k.size))
			t.walk = append(t.walk, toWalk(arch, &t.rules[ri]))
			slot := int32(-1)
			if r := &t.rules[ri]; r.Kind == KindDWARF {
				slot = int32(len(t.dwarfOffs))
				t.dwarfOffs = append(t.dwarfOffs, r.DWARFOffset)
			}
			t.dwarf = append(t.dwarf, slot)
		}
		t.rule[i] = ri
	}
	return t, nil
}

// Arch returns the architecture the table decodes for.
func (t *Table) Arch() unwind.Arch { return t.arch }

// Len returns the number of function ranges.
func (t *Table) Len() int { return len(t.starts) }

// Lookup returns the rule of the range that holds off, an offset from the
// image's mach header (pc minus the image's load address). ok is false
// when off lies outside every range. It does not allocate.
func (t *Table) Lookup(off uint32) (r Decoded, ok bool) {
	p, start, end, ok := t.find(off)
	if !ok {
		return Decoded{}, false
	}
	r = *p
	r.Start, r.End = start, end
	return r, true
}

// find returns the shared decoded rule of the range holding off (its Start
// and End are zero) and the range's bounds.
func (t *Table) find(off uint32) (r *Decoded, start, end uint32, ok bool) {
	i, start, end, ok := t.index(off)
	if !ok {
		return nil, 0, 0, false
	}
	return &t.rules[t.rule[i]], start, end, true
}

// index returns the entry of the range holding off and its bounds.
func (t *Table) index(off uint32) (i int, start, end uint32, ok bool) {
	// The last start <= off.
	lo, hi := 0, len(t.starts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.starts[m] <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	i = lo - 1
	if i < 0 || off >= t.end {
		return 0, 0, 0, false
	}
	end = t.end
	if i+1 < len(t.starts) {
		end = t.starts[i+1]
	}
	if off >= end {
		return 0, 0, 0, false // an empty range (two entries with one start)
	}
	return i, t.starts[i], end, true
}

// archOf maps a Mach-O cputype to the architecture of its unwind rules.
func archOf(cpu macho.Cpu) (unwind.Arch, error) {
	switch cpu {
	case macho.CpuArm64:
		return unwind.ArchARM64, nil
	case macho.CpuAmd64:
		return unwind.ArchAMD64, nil
	}
	return unwind.ArchUnknown, fmt.Errorf("compact: unsupported CPU %v", cpu)
}

// FromMachO parses the __TEXT,__unwind_info section of f and compiles it.
// It returns ErrNoUnwindInfo when the image has none.
func FromMachO(f *macho.File) (*Table, *Section, error) {
	arch, err := archOf(f.Cpu)
	if err != nil {
		return nil, nil, err
	}
	sec := f.Section("__unwind_info")
	if sec == nil || sec.Seg != "__TEXT" {
		return nil, nil, ErrNoUnwindInfo
	}
	data, err := sec.Data()
	if err != nil {
		return nil, nil, fmt.Errorf("compact: reading __unwind_info: %w", err)
	}
	seg := f.Segment("__TEXT")
	if seg == nil {
		return nil, nil, errors.New("compact: no __TEXT segment")
	}
	// __TEXT starts at image offset 0.
	t, s, err := compile(data, arch, readU32(seg, seg.Filesz))
	if err != nil || len(t.dwarfOffs) == 0 {
		return t, s, err
	}
	if eh := f.Section("__eh_frame"); eh != nil && eh.Seg == "__TEXT" && eh.Size <= MaxSectionSize && eh.Addr >= seg.Addr {
		if b, err := eh.Data(); err == nil {
			t.withEHFrame(b, eh.Addr, seg.Addr, seg.Memsz)
		}
	}
	return t, s, nil
}

// withEHFrame gives the table the image's __eh_frame (its bytes, loaded
// at ehAddr), whose FDEs answer the DWARF-mode entries as lookups meet
// them; __TEXT, at image offset 0, is loaded at textAddr for textSize
// bytes (link-time addresses: pointers in __eh_frame are link-time too).
func (t *Table) withEHFrame(eh []byte, ehAddr, textAddr, textSize uint64) {
	segs := []cfi.Segment{{Vaddr: textAddr, Size: textSize, Off: 0}}
	t.eh = cfi.NewFDEs(t.arch, cfi.Section{Data: eh, Addr: ehAddr, EH: true}, segs, t.dwarfOffs)
}

// readU32 returns a reader of 32-bit words at offsets of r below limit.
func readU32(r io.ReaderAt, limit uint64) func(off uint32) (uint32, bool) {
	return func(off uint32) (uint32, bool) {
		var b [4]byte
		if uint64(off)+4 > limit {
			return 0, false
		}
		if _, err := r.ReadAt(b[:], int64(off)); err != nil {
			return 0, false
		}
		return binary.LittleEndian.Uint32(b[:]), true
	}
}

func compile(data []byte, arch unwind.Arch, text func(uint32) (uint32, bool)) (*Table, *Section, error) {
	s, err := Parse(data)
	if err != nil {
		return nil, nil, err
	}
	t, err := NewTable(s, arch, text)
	return t, s, err
}

// MaxSectionSize bounds the __unwind_info FromMemory reads: a hostile
// header cannot make it read or allocate more. The largest system
// libraries' sections are a few hundred KiB.
const MaxSectionSize = 16 << 20

// FromMemory reads the __TEXT,__unwind_info section of the image whose
// mach header is at loadAddr in a target's memory and compiles it; images
// of the dyld shared cache are read the same way. It returns
// ErrNoUnwindInfo when the image has none.
func FromMemory(r unwind.MemoryReader, loadAddr uint64) (*Table, *Section, error) {
	m, err := images.ReadMachOFromMemory(r, loadAddr)
	if err != nil {
		return nil, nil, err
	}
	arch, err := archOf(macho.Cpu(m.CPU))
	if err != nil {
		return nil, nil, err
	}
	text := m.Text()
	if text == nil {
		return nil, nil, errors.New("compact: no __TEXT segment")
	}
	var sec *images.MachOSection
	for i := range m.Sections {
		if m.Sections[i].Segment == "__TEXT" && m.Sections[i].Name == "__unwind_info" {
			sec = &m.Sections[i]
		}
	}
	if sec == nil {
		return nil, nil, ErrNoUnwindInfo
	}
	// The section must lie inside __TEXT, whose offsets start at 0.
	off := sec.Addr - text.Addr
	if sec.Addr < text.Addr || off > text.Size || sec.Size > text.Size-off || sec.Size > MaxSectionSize {
		return nil, nil, fmt.Errorf("compact: __unwind_info [%#x, +%#x) is not inside __TEXT [%#x, +%#x) or exceeds %d bytes", sec.Addr, sec.Size, text.Addr, text.Size, MaxSectionSize)
	}
	data := make([]byte, sec.Size)
	if err := r.ReadMemory(loadAddr+off, data); err != nil {
		return nil, nil, fmt.Errorf("compact: reading __unwind_info at %#x: %w", loadAddr+off, err)
	}
	t, s, err := compile(data, arch, readU32(memAt{r, loadAddr}, text.Size))
	if err != nil || len(t.dwarfOffs) == 0 {
		return t, s, err
	}
	// DWARF-mode entries: the __TEXT,__eh_frame their FDEs lie in, read
	// now (between captures), compiled FDE by FDE as walks meet them.
	for i := range m.Sections {
		eh := &m.Sections[i]
		if eh.Segment != "__TEXT" || eh.Name != "__eh_frame" {
			continue
		}
		off := eh.Addr - text.Addr
		if eh.Addr < text.Addr || off > text.Size || eh.Size > text.Size-off || eh.Size > MaxSectionSize {
			break // not inside __TEXT: the entries stay unanswered
		}
		b := make([]byte, eh.Size)
		if r.ReadMemory(loadAddr+off, b) == nil {
			t.withEHFrame(b, eh.Addr, text.Addr, text.Size)
		}
		break
	}
	return t, s, nil
}

// memAt reads a target's memory at offsets from base.
type memAt struct {
	r    unwind.MemoryReader
	base uint64
}

func (m memAt) ReadAt(p []byte, off int64) (int, error) {
	if err := m.r.ReadMemory(m.base+uint64(off), p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ErrNoUnwindInfo says an image has no __TEXT,__unwind_info section.
var ErrNoUnwindInfo = errors.New("compact: no __unwind_info section")
