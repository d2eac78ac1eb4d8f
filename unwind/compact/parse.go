package compact

import (
	"encoding/binary"
	"fmt"
)

// Section is a parsed __unwind_info section: its header arrays and every
// function entry of its second-level pages, in file order. Offsets are
// relative to the image's __TEXT segment (the mach header), as in the file.
type Section struct {
	Version         uint32
	CommonEncodings []uint32
	// Personalities holds the image offsets of the personality pointers
	// (GOT slots); encodings refer to them 1-based.
	Personalities []uint32
	Index         []IndexEntry // the first-level index, sentinel included
	LSDA          []LSDAEntry
	Entries       []Entry // every second-level entry, sorted by Start
	// End is the sentinel index entry's function offset: the end of the
	// last entry's range.
	End uint32
}

// IndexEntry is one first-level index entry
// (unwind_info_section_header_index_entry).
type IndexEntry struct {
	FunctionOffset  uint32
	SecondLevelPage uint32 // section offset of the page; 0 in the sentinel
	LSDAIndexOffset uint32 // section offset of this range's LSDA entries
	Kind            uint32 // the page's kind (secondRegular or secondCompressed); 0 in the sentinel
}

// LSDAEntry maps a function to its language-specific data area
// (unwind_info_section_header_lsda_index_entry).
type LSDAEntry struct {
	FunctionOffset, LSDAOffset uint32
}

// Entry is one function entry of a second-level page: from Start (an image
// offset) up to the next entry's Start, the function unwinds by Encoding.
type Entry struct {
	Start, Encoding uint32
}

// FormatError reports malformed __unwind_info; Off is the byte offset in
// the section where the problem lies.
type FormatError struct {
	Off uint64
	Msg string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("compact: __unwind_info offset %#x: %s", e.Off, e.Msg)
}

func errAt(off uint64, format string, args ...any) error {
	return &FormatError{Off: off, Msg: fmt.Sprintf(format, args...)}
}

// reader reads little-endian fields of the section with bounds checks.
type reader []byte

// span reports whether count items of size bytes fit at off.
func (r reader) span(off, count, size uint64) bool {
	n := count * size // count < 2^32 and size <= 12: no overflow
	return off <= uint64(len(r)) && n <= uint64(len(r))-off
}

func (r reader) u32(off uint64) uint32 { return binary.LittleEndian.Uint32(r[off:]) }
func (r reader) u16(off uint64) uint16 { return binary.LittleEndian.Uint16(r[off:]) }

// Parse decodes an __unwind_info section. Every offset and count is checked
// against the section, so hostile input gives an error, never a panic; the
// entries it returns number at most len(data)/4, so memory stays
// proportional to the input.
func Parse(data []byte) (*Section, error) {
	r := reader(data)
	if !r.span(0, 1, headerSize) {
		return nil, errAt(0, "section of %d bytes is shorter than its %d-byte header", len(data), headerSize)
	}
	s := &Section{Version: r.u32(0)}
	if s.Version != sectionVersion {
		return nil, errAt(0, "version %d, want %d", s.Version, sectionVersion)
	}
	commonOff, commonN := uint64(r.u32(4)), uint64(r.u32(8))
	persOff, persN := uint64(r.u32(12)), uint64(r.u32(16))
	indexOff, indexN := uint64(r.u32(20)), uint64(r.u32(24))
	if !r.span(commonOff, commonN, 4) {
		return nil, errAt(4, "%d common encodings at %#x run past the section (%d bytes)", commonN, commonOff, len(data))
	}
	if !r.span(persOff, persN, 4) {
		return nil, errAt(12, "%d personalities at %#x run past the section (%d bytes)", persN, persOff, len(data))
	}
	if !r.span(indexOff, indexN, indexEntrySize) {
		return nil, errAt(20, "%d index entries at %#x run past the section (%d bytes)", indexN, indexOff, len(data))
	}
	s.CommonEncodings = make([]uint32, commonN)
	for i := range s.CommonEncodings {
		s.CommonEncodings[i] = r.u32(commonOff + 4*uint64(i))
	}
	s.Personalities = make([]uint32, persN)
	for i := range s.Personalities {
		s.Personalities[i] = r.u32(persOff + 4*uint64(i))
	}
	if indexN == 0 {
		return s, nil
	}
	s.Index = make([]IndexEntry, indexN)
	for i := range s.Index {
		off := indexOff + indexEntrySize*uint64(i)
		s.Index[i] = IndexEntry{FunctionOffset: r.u32(off), SecondLevelPage: r.u32(off + 4), LSDAIndexOffset: r.u32(off + 8)}
		if i > 0 && s.Index[i].FunctionOffset < s.Index[i-1].FunctionOffset {
			return nil, errAt(off, "index entry %d starts at %#x, before entry %d (%#x)", i, s.Index[i].FunctionOffset, i-1, s.Index[i-1].FunctionOffset)
		}
	}
	last := s.Index[indexN-1]
	s.End = last.FunctionOffset
	// The LSDA entries of all ranges lie between the first range's and the
	// sentinel's array offsets (UnwindCursor.hpp reads range i's from
	// lsdaIndexArraySectionOffset of i and i+1).
	lsdaLo, lsdaHi := uint64(s.Index[0].LSDAIndexOffset), uint64(last.LSDAIndexOffset)
	if lsdaHi < lsdaLo || (lsdaHi-lsdaLo)%lsdaEntrySize != 0 || !r.span(lsdaLo, (lsdaHi-lsdaLo)/lsdaEntrySize, lsdaEntrySize) {
		return nil, errAt(indexOff+8, "LSDA index [%#x, %#x) is not a whole number of entries inside the section", lsdaLo, lsdaHi)
	}
	s.LSDA = make([]LSDAEntry, (lsdaHi-lsdaLo)/lsdaEntrySize)
	for i := range s.LSDA {
		off := lsdaLo + lsdaEntrySize*uint64(i)
		s.LSDA[i] = LSDAEntry{FunctionOffset: r.u32(off), LSDAOffset: r.u32(off + 4)}
	}
	// Every entry takes at least 4 bytes of the section; more entries than
	// that means pages are shared or overlap, and would let a small input
	// ask for a large allocation.
	budget := len(data) / 4
	for i := 0; i+1 < len(s.Index); i++ {
		var err error
		if budget, err = s.page(r, i, budget); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// page appends the entries of the second-level page of index entry i.
func (s *Section) page(r reader, i, budget int) (int, error) {
	ix := &s.Index[i]
	lo, hi := ix.FunctionOffset, s.Index[i+1].FunctionOffset
	off := uint64(ix.SecondLevelPage)
	if !r.span(off, 1, 4) {
		return 0, errAt(off, "second-level page %d lies outside the section", i)
	}
	ix.Kind = r.u32(off)
	var n uint64
	switch ix.Kind {
	case secondRegular:
		if !r.span(off, 1, regularHeaderSize) {
			return 0, errAt(off, "regular page %d header runs past the section", i)
		}
		entOff, count := off+uint64(r.u16(off+4)), uint64(r.u16(off+6))
		if !r.span(entOff, count, regularEntrySize) {
			return 0, errAt(off, "regular page %d: %d entries at %#x run past the section", i, count, entOff)
		}
		n = count
	case secondCompressed:
		if !r.span(off, 1, compressedHdrSize) {
			return 0, errAt(off, "compressed page %d header runs past the section", i)
		}
		n = uint64(r.u16(off + 6))
		if !r.span(off+uint64(r.u16(off+4)), n, 4) {
			return 0, errAt(off, "compressed page %d: %d entries run past the section", i, n)
		}
		encOff, encN := off+uint64(r.u16(off+8)), uint64(r.u16(off+10))
		if !r.span(encOff, encN, 4) {
			return 0, errAt(off, "compressed page %d: %d local encodings at %#x run past the section", i, encN, encOff)
		}
	default:
		return 0, errAt(off, "second-level page %d has kind %d, want %d (regular) or %d (compressed)", i, ix.Kind, secondRegular, secondCompressed)
	}
	if n > uint64(budget) {
		return 0, errAt(off, "page %d: %d entries exceed what the section can hold", i, n)
	}
	budget -= int(n)
	for j := uint64(0); j < n; j++ {
		var e Entry
		if ix.Kind == secondRegular {
			eo := off + uint64(r.u16(off+4)) + regularEntrySize*j
			e = Entry{Start: r.u32(eo), Encoding: r.u32(eo + 4)}
		} else {
			raw := r.u32(off + uint64(r.u16(off+4)) + 4*j)
			e.Start = lo + raw&compressedOffMask
			if e.Start < lo { // wrapped past 2^32
				return 0, errAt(off, "compressed page %d entry %d: function offset overflows", i, j)
			}
			idx := uint64(raw >> compressedIdxShift)
			if common := uint64(len(s.CommonEncodings)); idx < common {
				e.Encoding = s.CommonEncodings[idx]
			} else if local := idx - common; local < uint64(r.u16(off+10)) {
				e.Encoding = r.u32(off + uint64(r.u16(off+8)) + 4*local)
			} else {
				return 0, errAt(off, "compressed page %d entry %d: encoding index %d beyond %d common and %d page encodings", i, j, idx, common, r.u16(off+10))
			}
		}
		if e.Start < lo || e.Start >= hi {
			return 0, errAt(off, "page %d entry %d: function offset %#x outside the page's range [%#x, %#x)", i, j, e.Start, lo, hi)
		}
		if k := len(s.Entries); k > 0 && e.Start < s.Entries[k-1].Start {
			return 0, errAt(off, "page %d entry %d: function offset %#x before the previous entry's %#x", i, j, e.Start, s.Entries[k-1].Start)
		}
		s.Entries = append(s.Entries, e)
	}
	return budget, nil
}

// LSDAFor returns the LSDA offset of the function that starts at fn, by the
// exact match UnwindCursor.hpp uses.
func (s *Section) LSDAFor(fn uint32) (uint32, bool) {
	lo, hi := 0, len(s.LSDA)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch e := s.LSDA[m]; {
		case e.FunctionOffset == fn:
			return e.LSDAOffset, true
		case e.FunctionOffset < fn:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, false
}
