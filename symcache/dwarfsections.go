package symcache

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"strings"
)

// lineDWARFSections are the DWARF sections that line tables, unit ranges
// and inlined calls read, beyond the five dwarf.New takes: location lists
// (.debug_loclists, often the largest after .debug_info), types, frames
// and macros are never decompressed for lines.
var lineDWARFSections = [...]string{"addr", "line_str", "rnglists", "str_offsets"}

// elfLineDWARF returns f's DWARF for DWARFLines, decompressing only the
// sections a line or inlined-call lookup reads, where f.DWARF decompresses
// every .debug_* section (libc's separate debug file spends a third of its
// load on .debug_loclists alone). An object whose DWARF sections carry
// relocations (an ET_REL object) is read by f.DWARF, which applies them.
func elfLineDWARF(f *elf.File) (*dwarf.Data, error) {
	if f.Type == elf.ET_REL || dwarfRelocated(f) {
		return f.DWARF()
	}
	data := func(name string) ([]byte, error) {
		s := dwarfSection(f, name)
		if s == nil {
			return nil, nil
		}
		b, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		return b, nil
	}
	var base [5][]byte
	for i, name := range [...]string{"abbrev", "info", "line", "ranges", "str"} {
		b, err := data(name)
		if err != nil {
			return nil, err
		}
		base[i] = b
	}
	d, err := dwarf.New(base[0], nil, nil, base[1], base[2], nil, base[3], base[4])
	if err != nil {
		return nil, err
	}
	for _, name := range lineDWARFSections {
		b, err := data(name)
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		if err := d.AddSection(".debug_"+name, b); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// dwarfSection returns f's section .debug_NAME, or .zdebug_NAME (the older
// GNU compression, which debug/elf decompresses too), or nil.
func dwarfSection(f *elf.File, name string) *elf.Section {
	if s := f.Section(".debug_" + name); s != nil && s.Type != elf.SHT_NOBITS {
		return s
	}
	if s := f.Section(".zdebug_" + name); s != nil && s.Type != elf.SHT_NOBITS {
		return s
	}
	return nil
}

// dwarfRelocated reports whether a relocation section of f applies to a
// DWARF section, which f.DWARF would patch.
func dwarfRelocated(f *elf.File) bool {
	for _, r := range f.Sections {
		if r.Type != elf.SHT_REL && r.Type != elf.SHT_RELA {
			continue
		}
		if int(r.Info) <= 0 || int(r.Info) >= len(f.Sections) {
			continue
		}
		n := f.Sections[r.Info].Name
		if strings.HasPrefix(n, ".debug_") || strings.HasPrefix(n, ".zdebug_") {
			return true
		}
	}
	return false
}
