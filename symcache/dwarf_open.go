package symcache

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"strings"

	"github.com/macprof/macprof/internal/objfile"
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
	return elfDWARFIn(f, nil)
}

// elfDWARFIn is elfDWARFUnrelocated with the sections read in place from
// m, f's mapping, when m is not nil (where dwarfInPlace(f) holds; read
// them only with objfile.PanicOnFault set): node's 1.5 MB of DWARF
// neither copied nor faulted in as fresh heap.
func elfDWARFIn(f *elf.File, m *objfile.Mapping) (*dwarf.Data, *dwarfInfo, error) {
	data := func(name string) ([]byte, error) {
		s := dwarfSection(f, name)
		if s == nil {
			return nil, nil
		}
		b, err := objfile.SectionBytes(m, s)
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

// dwarfInPlace reports whether the DWARF sections elfDWARF reads of f can
// be read in place from a mapping of its file: unrelocated, and stored
// as they are read (neither SHF_COMPRESSED nor .zdebug_).
func dwarfInPlace(f *elf.File) bool {
	if f.Type == elf.ET_REL || dwarfRelocated(f) {
		return false
	}
	for _, names := range [...][]string{{"abbrev", "info", "line", "ranges", "str"}, lineDWARFSections[:]} {
		for _, name := range names {
			if s := dwarfSection(f, name); s != nil && (s.Flags&elf.SHF_COMPRESSED != 0 || strings.HasPrefix(s.Name, ".zdebug_")) {
				return false
			}
		}
	}
	return true
}

// elfMappedDWARF is the lazy LineSource of the DWARF of f, read in place
// from m, its mapping (dwarfInPlace(f) holds), as elfLines reads it from
// the file: valid until m is closed, and read with objfile.PanicOnFault
// set.
func elfMappedDWARF(object string, f *elf.File, m *objfile.Mapping) LineSource {
	return newLazyDWARF(func() (_ LineSource, err error) {
		defer objfile.RecoverFault(&err, objfile.PanicOnFault())
		d, info, err := elfDWARFIn(f, m)
		if err != nil {
			return nil, fmt.Errorf("symcache: %s: %w", object, err)
		}
		return newDWARFLines(d, info, false)
	})
}
