package symcache

import (
	"debug/dwarf"
	"debug/elf"
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
	d, _, err := elfDWARF(f)
	return d, err
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
