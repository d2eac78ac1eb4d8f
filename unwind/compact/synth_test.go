package compact

import "encoding/binary"

// synthPage is one second-level page of a synthetic __unwind_info.
type synthPage struct {
	regular bool
	entries []Entry  // absolute starts; the page's range starts at entries[0].Start
	local   []uint32 // compressed pages: page-local encodings
}

// buildSection lays out a version-1 __unwind_info the way ld64 and lld do:
// header, common encodings, personalities, first-level index (with its
// sentinel at end), LSDA index, then the pages.
func buildSection(common, pers []uint32, pages []synthPage, end uint32, lsda []LSDAEntry) []byte {
	le := binary.LittleEndian
	var b []byte
	u32 := func(v uint32) { b = le.AppendUint32(b, v) }
	commonOff := uint32(headerSize)
	persOff := commonOff + 4*uint32(len(common))
	indexOff := persOff + 4*uint32(len(pers))
	lsdaOff := indexOff + indexEntrySize*uint32(len(pages)+1)
	pageOff := lsdaOff + lsdaEntrySize*uint32(len(lsda))
	u32(sectionVersion)
	u32(commonOff)
	u32(uint32(len(common)))
	u32(persOff)
	u32(uint32(len(pers)))
	u32(indexOff)
	u32(uint32(len(pages) + 1))
	for _, c := range common {
		u32(c)
	}
	for _, p := range pers {
		u32(p)
	}
	var pageData []byte
	for _, p := range pages {
		u32(p.entries[0].Start)
		u32(pageOff + uint32(len(pageData)))
		u32(lsdaOff)
		pageData = append(pageData, p.bytes(common)...)
	}
	u32(end)
	u32(0)
	u32(lsdaOff + lsdaEntrySize*uint32(len(lsda)))
	for _, l := range lsda {
		u32(l.FunctionOffset)
		u32(l.LSDAOffset)
	}
	return append(b, pageData...)
}

func (p synthPage) bytes(common []uint32) []byte {
	le := binary.LittleEndian
	var b []byte
	if p.regular {
		b = le.AppendUint32(b, secondRegular)
		b = le.AppendUint16(b, regularHeaderSize)
		b = le.AppendUint16(b, uint16(len(p.entries)))
		for _, e := range p.entries {
			b = le.AppendUint32(b, e.Start)
			b = le.AppendUint32(b, e.Encoding)
		}
		return b
	}
	b = le.AppendUint32(b, secondCompressed)
	b = le.AppendUint16(b, compressedHdrSize)
	b = le.AppendUint16(b, uint16(len(p.entries)))
	b = le.AppendUint16(b, compressedHdrSize+4*uint16(len(p.entries)))
	b = le.AppendUint16(b, uint16(len(p.local)))
	base := p.entries[0].Start
	for _, e := range p.entries {
		idx := -1
		for i, c := range common {
			if c == e.Encoding {
				idx = i
			}
		}
		for i, c := range p.local {
			if idx < 0 && c == e.Encoding {
				idx = len(common) + i
			}
		}
		b = le.AppendUint32(b, (e.Start-base)|uint32(idx)<<24)
	}
	for _, c := range p.local {
		b = le.AppendUint32(b, c)
	}
	return b
}
