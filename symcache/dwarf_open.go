package symcache

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
)

// elfDWARF reads f's DWARF for lines as elfLineDWARF does (only the
// sections line and inlined-call lookups read), and keeps .debug_info and
// .debug_abbrev for going over entries without decoding them, and
// .debug_line for running line programs (dwarfInfo).
// Relocated DWARF (an ET_REL object) is read by f.DWARF, which applies the
// relocations, and its entries through debug/dwarf alone (info nil).
func elfDWARF(f *elf.File) (*dwarf.Data, *dwarfInfo, error) {
	if f.Type == elf.ET_REL || dwarfRelocated(f) {
		d, err := f.DWARF()
		return d, nil, err
	}
	return elfDWARFUnrelocated(f)
}

// elfDWARFUnrelocated is elfDWARF for DWARF read as it is in the file.
func elfDWARFUnrelocated(f *elf.File) (*dwarf.Data, *dwarfInfo, error) {
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
			return nil, nil, err
		}
		base[i] = b
	}
	d, err := dwarf.New(base[0], nil, nil, base[1], base[2], nil, base[3], base[4])
	if err != nil {
		return nil, nil, err
	}
	for _, name := range lineDWARFSections {
		b, err := data(name)
		if err != nil {
			return nil, nil, err
		}
		if b == nil {
			continue
		}
		if err := d.AddSection(".debug_"+name, b); err != nil {
			return nil, nil, err
		}
	}
	return d, newDWARFInfo(base[1], base[0], base[2], f.ByteOrder), nil
}
