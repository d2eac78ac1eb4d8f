package cfi

import (
	"sync"
	"sync/atomic"

	"github.com/macprof/macprof/unwind"
)

// FDEs compiles the FDEs of an .eh_frame named by their section offsets,
// each on the first lookup in it: a Mach-O image's compact unwind entries
// in DWARF mode name their function's FDE so (UNWIND_X86_64_DWARF_SECTION_OFFSET,
// UNWIND_ARM64_DWARF_SECTION_OFFSET), and a profile meets few of them. It
// is the Mach-O counterpart of the index .eh_frame_hdr gives an ELF
// object: a lookup of a compiled FDE reads without locking and does not
// allocate; compiling one takes the lock, and the rows compiled stop
// growing at twice the section's bytes.
type FDEs struct {
	sec  Section
	segs []Segment
	offs []uint32                  // the FDE of each slot, as section offsets
	fdes []atomic.Pointer[fdeRows] // compiled, by slot

	mu    sync.Mutex // held while compiling
	m     machine
	cies  map[uint64]*cie
	byOff map[uint32]*fdeRows // slots naming one FDE share its rows
	rows  atomic.Int64
}

// NewFDEs returns the FDEs of the .eh_frame eh at the section offsets
// offs (slot i is offs[i]); segs map its addresses to the offsets lookups
// use (for a Mach-O image: __TEXT's address to image offset 0).
func NewFDEs(arch unwind.Arch, eh Section, segs []Segment, offs []uint32) *FDEs {
	eh.EH = true
	x := &FDEs{sec: eh, segs: segs, offs: offs, fdes: make([]atomic.Pointer[fdeRows], len(offs)),
		cies: map[uint64]*cie{}, byOff: map[uint32]*fdeRows{}}
	x.m.arch, x.m.eh, x.m.chunk = arch, true, lazyRowChunk
	return x
}

// Find returns the rule of slot's FDE at offset off, nil where the FDE
// does not cover off or cannot be used (no FDE at its offset, a CIE
// there, a program the machine refuses). The rule must not be modified.
func (x *FDEs) Find(slot int, off uint64) *unwind.Rule {
	if x == nil || slot < 0 || slot >= len(x.fdes) {
		return nil
	}
	f := x.fdes[slot].Load()
	if f == nil {
		f = x.compile(slot)
	}
	r, _ := f.find(off)
	return r
}

// Bytes returns the approximate memory the FDEs hold: the section, a
// pointer per slot and 32 bytes a compiled row.
func (x *FDEs) Bytes() int {
	if x == nil {
		return 0
	}
	return len(x.sec.Data) + 12*len(x.offs) + 32*int(x.rows.Load())
}

// compile compiles slot's FDE, once.
func (x *FDEs) compile(slot int) *fdeRows {
	x.mu.Lock()
	defer x.mu.Unlock()
	if f := x.fdes[slot].Load(); f != nil {
		return f
	}
	pos := x.offs[slot]
	f, ok := x.byOff[pos]
	if !ok {
		f = &fdeRows{}
		if x.rows.Load() < 2*int64(len(x.sec.Data)) {
			f = x.parse(uint64(pos))
		}
		x.byOff[pos] = f
		x.rows.Add(int64(len(f.rows)))
	}
	x.fdes[slot].Store(f)
	return f
}

// parse runs the FDE at section offset pos and keeps its rows in order
// inside its range.
func (x *FDEs) parse(pos uint64) *fdeRows {
	none := &fdeRows{}
	if pos >= uint64(len(x.sec.Data)) {
		return none
	}
	rec, _, ok := recordAt(x.sec.Data, int(pos), true)
	if !ok || rec.cie {
		return none
	}
	c := cieOf(x.cies, rec, x.sec)
	if c == nil {
		return none
	}
	s, ok := x.m.fde(c, rec.body, x.sec.Addr+uint64(rec.at), x.sec, x.segs)
	if !ok {
		return none
	}
	rows := s.rows[:0]
	for _, row := range s.rows {
		if n := len(rows); (n == 0 || row.Off > rows[n-1].Off) && row.Off >= s.start && row.Off < s.end {
			rows = append(rows, row)
		}
	}
	return &fdeRows{start: s.start, end: s.end, rows: rows}
}
