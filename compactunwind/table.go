package compactunwind

import (
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/macprof/macprof/unwind"
)

// Table is the compiled, read-only rule table of one image: function
// ranges sorted by start, each with its encoding, looked up by binary
// search. It holds no pointers into the section it came from and may be
// shared by concurrent lookups.
type Table struct {
	arch   unwind.Arch
	starts []uint32 // entry starts, sorted; starts[i] <= starts[i+1]
	encs   []uint32 // encoding per entry
	sizes  []uint32 // resolved _STACK_IND stack size per entry (x86_64), else 0
	end    uint32   // end of the last range
}

// NewTable compiles a parsed section for arch. text reads the image at an
// image offset (the x86_64 _STACK_IND rules need the immediate of the
// function's own "sub $n, %rsp"); it may be nil when there is none.
func NewTable(s *Section, arch unwind.Arch, text func(off uint32) (uint32, bool)) (*Table, error) {
	if arch != unwind.ArchARM64 && arch != unwind.ArchAMD64 {
		return nil, fmt.Errorf("compactunwind: unsupported architecture %v", arch)
	}
	n := len(s.Entries)
	t := &Table{arch: arch, starts: make([]uint32, n), encs: make([]uint32, n), end: s.End}
	for i, e := range s.Entries {
		t.starts[i], t.encs[i] = e.Start, e.Encoding
		if arch == unwind.ArchAMD64 && e.Encoding&x86ModeMask == x86ModeStackInd {
			if t.sizes == nil {
				t.sizes = make([]uint32, n)
			}
			t.sizes[i] = indirectSize(e.Start, e.Encoding, text)
		}
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
func (t *Table) Lookup(off uint32) (r Rule, ok bool) {
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
	i := lo - 1
	if i < 0 || off >= t.end {
		return Rule{}, false
	}
	end := t.end
	if i+1 < len(t.starts) {
		end = t.starts[i+1]
	}
	if off >= end {
		return Rule{}, false // an empty range (two entries with one start)
	}
	var size uint32
	if t.sizes != nil {
		size = t.sizes[i]
	}
	return decode(t.arch, t.starts[i], end, t.encs[i], size), true
}

// FromMachO parses the __TEXT,__unwind_info section of f and compiles it.
// It returns ErrNoUnwindInfo when the image has none.
func FromMachO(f *macho.File) (*Table, *Section, error) {
	var arch unwind.Arch
	switch f.Cpu {
	case macho.CpuArm64:
		arch = unwind.ArchARM64
	case macho.CpuAmd64:
		arch = unwind.ArchAMD64
	default:
		return nil, nil, fmt.Errorf("compactunwind: unsupported CPU %v", f.Cpu)
	}
	sec := f.Section("__unwind_info")
	if sec == nil || sec.Seg != "__TEXT" {
		return nil, nil, ErrNoUnwindInfo
	}
	data, err := sec.Data()
	if err != nil {
		return nil, nil, fmt.Errorf("compactunwind: reading __unwind_info: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, nil, err
	}
	seg := f.Segment("__TEXT")
	if seg == nil {
		return nil, nil, errors.New("compactunwind: no __TEXT segment")
	}
	text := func(off uint32) (uint32, bool) {
		var b [4]byte
		// __TEXT starts at file offset seg.Offset and image offset 0.
		if _, err := seg.ReadAt(b[:], int64(off)); err != nil {
			return 0, false
		}
		return binary.LittleEndian.Uint32(b[:]), true
	}
	t, err := NewTable(s, arch, text)
	return t, s, err
}

// ErrNoUnwindInfo says an image has no __TEXT,__unwind_info section.
var ErrNoUnwindInfo = errors.New("compactunwind: no __unwind_info section")
