package symcache

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"math"

	"github.com/macprof/macprof/internal/objfile"
)

// A stripped ELF object keeps only .dynsym, which names its exported
// functions; its other functions would be named after the exported one
// before them, or not at all. Its .eh_frame still has one FDE per function
// (for unwinding), whose initial location is the function's start
// (System V ABI AMD64, 3.7 "Stack Unwind Algorithm"; LSB Core, "Exception
// Frames"), so the loader takes every FDE start as an anonymous start:
// such a function is named image+0xSTART, as LC_FUNCTION_STARTS does for
// Mach-O.

// maxEHFrame bounds the .eh_frame read for function starts.
const maxEHFrame = objfile.MaxFrameSection

// ehFrameStarts appends the initial location of every FDE in .eh_frame to
// dst. A malformed section stops the walk: the starts read so far stay.
func ehFrameStarts(f *elf.File, dst []uint64) ([]uint64, error) {
	s := f.Section(".eh_frame")
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size == 0 {
		return dst, nil
	}
	if s.Size > maxEHFrame {
		return dst, errors.New(".eh_frame too large")
	}
	data, err := s.Data()
	if err != nil {
		return dst, err
	}
	ptr := 8
	if f.Class == elf.ELFCLASS32 {
		ptr = 4
	}
	return parseEHFrame(data, s.Addr, f.ByteOrder, ptr, dst), nil
}

// DW_EH_PE pointer encodings (LSB Core, "DWARF Exception Header Encoding").
const (
	ehAbsptr  = 0x00
	ehUleb128 = 0x01
	ehUdata2  = 0x02
	ehUdata4  = 0x03
	ehUdata8  = 0x04
	ehSleb128 = 0x09
	ehSdata2  = 0x0a
	ehSdata4  = 0x0b
	ehSdata8  = 0x0c
	ehPcrel   = 0x10
	ehOmit    = 0xff
)

// parseEHFrame walks the CIEs and FDEs of an .eh_frame section loaded at
// addr and appends each FDE's start to dst. Every read is bounds-checked:
// each record moves forward by its length, so the walk ends.
func parseEHFrame(data []byte, addr uint64, order binary.ByteOrder, ptr int, dst []uint64) []uint64 {
	encs := map[uint64]byte{} // CIE offset -> FDE pointer encoding
	for off := uint64(0); off+8 <= uint64(len(data)); {
		length := uint64(order.Uint32(data[off:]))
		hdr := uint64(4)
		if length == 0 {
			break // terminator
		}
		if length == 0xffffffff {
			if off+12 > uint64(len(data)) {
				break
			}
			length, hdr = order.Uint64(data[off+4:]), 12
		}
		end := off + hdr + length
		if length > uint64(len(data)) || end > uint64(len(data)) || end < off+hdr+4 {
			break
		}
		idOff := off + hdr
		rec := data[:end]
		id := uint64(order.Uint32(data[idOff:]))
		body := idOff + 4
		if hdr == 12 {
			if body+4 > end {
				break
			}
			id = order.Uint64(data[idOff:])
			body = idOff + 8
		}
		if id == 0 {
			if enc, ok := cieEncoding(rec, body, order); ok {
				encs[off] = enc
			}
		} else if id <= idOff {
			cie := idOff - id
			if enc, ok := encs[cie]; ok {
				if v, ok := readEncoded(rec, body, enc, addr, order, ptr); ok && v != 0 {
					dst = append(dst, v)
				}
			}
		}
		off = end
	}
	return dst
}

// cieEncoding reads a CIE's FDE pointer encoding ('R' augmentation),
// DW_EH_PE_absptr when it has none.
func cieEncoding(rec []byte, p uint64, order binary.ByteOrder) (byte, bool) {
	if p >= uint64(len(rec)) {
		return 0, false
	}
	version := rec[p]
	p++
	augStart := p
	for p < uint64(len(rec)) && rec[p] != 0 {
		p++
	}
	if p >= uint64(len(rec)) {
		return 0, false
	}
	aug := string(rec[augStart:p])
	p++
	if len(aug) >= 2 && aug[:2] == "eh" {
		return 0, false // old GCC layout: not worth reading
	}
	var ok bool
	if _, p, ok = uleb(rec, p); !ok { // code alignment
		return 0, false
	}
	if _, p, ok = uleb(rec, p); !ok { // data alignment (sleb: same length)
		return 0, false
	}
	if version == 1 {
		p++
	} else if _, p, ok = uleb(rec, p); !ok {
		return 0, false
	}
	if aug == "" || aug[0] != 'z' {
		return ehAbsptr, true
	}
	if _, p, ok = uleb(rec, p); !ok {
		return 0, false
	}
	for _, c := range aug[1:] {
		if p >= uint64(len(rec)) {
			return 0, false
		}
		switch c {
		case 'R':
			return rec[p], true
		case 'L':
			p++
		case 'P':
			enc := rec[p]
			n, ok := encodedSize(rec, p+1, enc, 8)
			if !ok {
				return 0, false
			}
			p += 1 + n
		case 'S', 'B', 'G':
		default:
			return 0, false
		}
	}
	return ehAbsptr, true
}

// encodedSize returns the size of a pointer encoded with enc at p.
func encodedSize(b []byte, p uint64, enc byte, ptr int) (uint64, bool) {
	switch enc & 0x0f {
	case ehAbsptr:
		return uint64(ptr), true
	case ehUdata2, ehSdata2:
		return 2, true
	case ehUdata4, ehSdata4:
		return 4, true
	case ehUdata8, ehSdata8:
		return 8, true
	case ehUleb128, ehSleb128:
		_, q, ok := uleb(b, p)
		return q - p, ok
	}
	return 0, false
}

// readEncoded reads the pointer encoded with enc at p in rec (the section
// starts at addr).
func readEncoded(rec []byte, p uint64, enc byte, addr uint64, order binary.ByteOrder, ptr int) (uint64, bool) {
	if enc == ehOmit {
		return 0, false
	}
	n, ok := encodedSize(rec, p, enc, ptr)
	if !ok || p+n > uint64(len(rec)) {
		return 0, false
	}
	var v uint64
	switch enc & 0x0f {
	case ehAbsptr:
		if ptr == 4 {
			v = uint64(order.Uint32(rec[p:]))
		} else {
			v = order.Uint64(rec[p:])
		}
	case ehUdata2:
		v = uint64(order.Uint16(rec[p:]))
	case ehSdata2:
		v = uint64(int64(int16(order.Uint16(rec[p:]))))
	case ehUdata4:
		v = uint64(order.Uint32(rec[p:]))
	case ehSdata4:
		v = uint64(int64(int32(order.Uint32(rec[p:]))))
	case ehUdata8, ehSdata8:
		v = order.Uint64(rec[p:])
	default:
		return 0, false // leb128 starts: not produced by compilers
	}
	switch enc & 0x70 {
	case 0:
	case ehPcrel:
		v += addr + p
	default:
		return 0, false // datarel, textrel, funcrel: not for FDE starts in ELF
	}
	return v, true
}

// uleb reads an unsigned LEB128 at p, returning the position after it.
func uleb(b []byte, p uint64) (uint64, uint64, bool) {
	var v uint64
	for shift := uint(0); p < uint64(len(b)); shift += 7 {
		c := b[p]
		p++
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c < 0x80 {
			return v, p, true
		}
	}
	return 0, p, false
}

// ehFrameHdrStarts returns the FDE starts that .eh_frame_hdr's search
// table lists (the linker writes one entry per FDE of .eh_frame, sorted),
// without walking .eh_frame; false when f has no such table this reads:
// another layout, a table for another section, longer than .eh_frame
// could need, or out of order. Its table is a binary search table of
// (initial location, FDE address) pairs, each a signed 4-byte offset from
// the header's start (LSB Core, ".eh_frame_hdr").
func ehFrameHdrStarts(f *elf.File) ([]uint64, bool) { return ehFrameHdrStartsIn(f, nil) }

// ehFrameHdrStartsIn is ehFrameHdrStarts reading the table in place from
// m, f's mapping, when m is not nil (read with objfile.PanicOnFault set).
func ehFrameHdrStartsIn(f *elf.File, m *objfile.Mapping) ([]uint64, bool) {
	hs, es := f.Section(".eh_frame_hdr"), f.Section(".eh_frame")
	if hs == nil || es == nil || hs.Type == elf.SHT_NOBITS || hs.Size > maxEHFrame || f.ByteOrder != binary.LittleEndian {
		return nil, false
	}
	hdr, err := objfile.SectionBytes(m, hs)
	if err != nil {
		return nil, false
	}
	return parseEHFrameHdr(hdr, hs.Addr, es.Addr, es.Size)
}

// ehHdrTableEnc is the table encoding GNU ld, gold and lld write:
// DW_EH_PE_datarel | DW_EH_PE_sdata4.
const ehHdrTableEnc = 0x30 | ehSdata4

// parseEHFrameHdr reads the search table of an .eh_frame_hdr hdr loaded
// at addr, for the .eh_frame at ehAddr of ehSize bytes.
func parseEHFrameHdr(hdr []byte, addr, ehAddr, ehSize uint64) ([]uint64, bool) {
	if len(hdr) < 4 || hdr[0] != 1 || hdr[3] != ehHdrTableEnc {
		return nil, false
	}
	p := uint64(4)
	ptr, ok := readEncoded(hdr, p, hdr[1], addr, binary.LittleEndian, 8)
	if !ok || ptr != ehAddr {
		return nil, false
	}
	n, _ := encodedSize(hdr, p, hdr[1], 8)
	p += n
	count, ok := readEncoded(hdr, p, hdr[2], addr, binary.LittleEndian, 8)
	if !ok || hdr[2]&0x70 != 0 {
		return nil, false
	}
	n, _ = encodedSize(hdr, p, hdr[2], 8)
	p += n
	// Every FDE takes at least 16 bytes of .eh_frame.
	if count > (uint64(len(hdr))-p)/8 || count > ehSize/16 {
		return nil, false
	}
	table := hdr[p : p+8*count]
	starts := make([]uint64, 0, count)
	prev := int64(math.MinInt64)
	for i := uint64(0); i < count; i++ {
		rel := int64(int32(binary.LittleEndian.Uint32(table[8*i:])))
		if rel < prev {
			return nil, false
		}
		prev = rel
		if v := addr + uint64(rel); v != 0 {
			starts = append(starts, v)
		}
	}
	return starts, true
}
