package symbolize

import (
	"path/filepath"
	"unsafe"

	"github.com/macprof/macprof/demangle"
)

// metBits is the log2 of the metLines a block holds (48 KiB of them).
const metBits = 10

// metLine is a function name and a file the line tables gave, with their
// indexes in lnames and files.
type metLine struct {
	raw, path  string
	name, file int32
}

// outerLine returns, for va in function names[slot], from the table's
// lines: the index in s.files of its file's base name (-1 when none), its
// line, and the index in s.lnames of the function the lines name (-1 when
// they name none), demangled once per distinct name.
func (s *symbolizer) outerLine(va uint64, slot int32) (file, line, name int32) {
	file, name = -1, -1
	if !s.table.HasLines() {
		return file, 0, name
	}
	fn, path, ln, ok := s.lines.OuterLine(va)
	if !ok {
		return file, 0, name
	}
	line = int32(ln) // at most 1<<30 (Go) or 32 bits (DWARF)
	if fn != "" {
		if fn != s.lastRaw {
			// Another function than the last address's.
			m := s.metLine(slot)
			if fn != m.raw {
				m.raw, m.name = fn, s.lineName(fn, m.raw == "")
			}
			s.lastRaw, s.lastName = fn, m.name
		}
		name = s.lastName
	}
	if path == "" {
		return file, line, name
	}
	if path != s.lastFile {
		m := s.metLine(slot)
		if path != m.path {
			m.path, m.file = path, s.fileIndexOf(path)
		}
		s.lastFile, s.lastFileIndex = path, m.file
	}
	return s.lastFileIndex, line, name
}

// metLine returns what the line tables last gave in function
// names[slot], added (empty) the first time.
func (s *symbolizer) metLine(slot int32) *metLine {
	k := s.metIndex[slot] - 1
	if k < 0 {
		k = s.metCount
		if int(k>>metBits) == len(s.metLines) {
			s.metLines = append(s.metLines, new([1 << metBits]metLine))
		}
		s.metCount++
		s.metIndex[slot] = k + 1
	}
	return &s.metLines[k>>metBits][k&(1<<metBits-1)]
}

// lineName returns the index in s.lnames of what the function name raw
// prints as, demangled the first time. The first name of a function met
// (first), when not mangled (Go's and C's, which print as they are), is
// added without a map lookup: at most one per function.
func (s *symbolizer) lineName(raw string, first bool) int32 {
	if first && !demangle.IsMangled(raw) {
		s.lnames = append(s.lnames, raw)
		return int32(len(s.lnames) - 1)
	}
	k, seen := s.lineNames[raw]
	if !seen {
		k = int32(len(s.lnames))
		s.lnames = append(s.lnames, demangle.Name(raw, demangle.Simplified))
		s.lineNames[raw] = k
	}
	return k
}

// fileIndexOf returns the index in s.files of the base name of path with
// a colon (as printed before the line).
func (s *symbolizer) fileIndexOf(path string) int32 {
	// Line tables hand out the same string for a file again and again
	// (a Go cursor's for every function of a package): found by where
	// it lies, compared without reading it, before the map hashes it.
	c := &s.fileCache[uintptr(unsafe.Pointer(unsafe.StringData(path)))>>3%uintptr(len(s.fileCache))]
	if c.path == path && c.path != "" {
		return c.file
	}
	k := s.fileIndexSlow(path)
	c.path, c.file = path, k
	return k
}

// fileIndexSlow is fileIndexOf through the map.
func (s *symbolizer) fileIndexSlow(path string) int32 {
	k, seen := s.fileIndex[path]
	if !seen {
		k = int32(len(s.files))
		s.files = append(s.files, padded(filepath.Base(path)+":")) // for movePadded
		s.fileIndex[path] = k
	}
	return k
}
