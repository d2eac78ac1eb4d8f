package symcache

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// eagerDWARFLines is the whole-object DWARF index of commit 5e14ada: every
// unit's rows in one table and every subprogram in one list.
type eagerDWARFLines struct {
	rows  []eagerRow
	files []string
	funcs []funcRange
	nodes []dnode
}

// eagerRow is a line row of the eager index, kept apart from the lazy
// index's lineRow so that the oracle does not follow its encoding.
type eagerRow struct {
	addr       uint64
	file, line int32
	end        bool
}

// newEagerDWARFLines indexes all of d at once, as NewDWARFLines did before
// it read compile units on first need: the oracle the lazy index is
// compared with.
func newEagerDWARFLines(d *dwarf.Data, machO bool) (*eagerDWARFLines, error) {
	l := &eagerDWARFLines{}
	fileIdx := map[string]int32{}
	intern := func(name string) int32 {
		if i, ok := fileIdx[name]; ok {
			return i
		}
		i := int32(len(l.files))
		l.files = append(l.files, name)
		fileIdx[name] = i
		return i
	}
	type named struct {
		name, linkage string
		ref           dwarf.Offset // DW_AT_specification or DW_AT_abstract_origin
	}
	names := map[dwarf.Offset]named{}
	origin := map[int32]dwarf.Offset{} // node -> entry that names it

	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("dwarf: %w", err)
		}
		if cu == nil {
			break
		}
		if cu.Tag != dwarf.TagCompileUnit && cu.Tag != dwarf.TagPartialUnit {
			r.SkipChildren()
			continue
		}
		var cuFiles []*dwarf.LineFile
		if lr, err := d.LineReader(cu); err == nil && lr != nil {
			var le dwarf.LineEntry
			for len(l.rows) < maxLineRows {
				if err := lr.Next(&le); err != nil {
					break // io.EOF, or a broken table: keep what was read
				}
				row := eagerRow{addr: le.Address, line: int32(le.Line), end: le.EndSequence, file: -1}
				if le.File != nil {
					row.file = intern(le.File.Name)
				}
				l.rows = append(l.rows, row)
			}
			cuFiles = lr.Files()
		}
		if !cu.Children {
			continue
		}
		// Walk the unit's tree; stack holds, per depth, the nearest
		// subprogram or inlined subroutine node (-1 for none).
		stack := []int32{-1}
		for len(stack) > 0 {
			e, err := r.Next()
			if err != nil {
				return nil, fmt.Errorf("dwarf: %w", err)
			}
			if e == nil {
				break
			}
			if e.Tag == 0 {
				stack = stack[:len(stack)-1]
				continue
			}
			parent := stack[len(stack)-1]
			cur := parent
			switch e.Tag {
			case dwarf.TagSubprogram, dwarf.TagInlinedSubroutine:
				n := named{}
				n.name, _ = e.Val(dwarf.AttrName).(string)
				n.linkage, _ = e.Val(dwarf.AttrLinkageName).(string)
				if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
					n.ref = o
				} else if o, ok := e.Val(dwarf.AttrSpecification).(dwarf.Offset); ok {
					n.ref = o
				}
				names[e.Offset] = n
				rs, err := d.Ranges(e)
				if err != nil || len(rs) == 0 || len(l.nodes) >= maxDWARFNodes {
					break
				}
				node := dnode{ranges: rs, callFile: -1}
				if e.Tag == dwarf.TagInlinedSubroutine {
					if cf, ok := e.Val(dwarf.AttrCallFile).(int64); ok && cf >= 0 && cf < int64(len(cuFiles)) && cuFiles[cf] != nil {
						node.callFile = intern(cuFiles[cf].Name)
					}
					if cl, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
						node.callLine = int32(cl)
					}
				}
				idx := int32(len(l.nodes))
				l.nodes = append(l.nodes, node)
				origin[idx] = e.Offset
				if parent >= 0 && e.Tag == dwarf.TagInlinedSubroutine {
					l.nodes[parent].children = append(l.nodes[parent].children, idx)
				} else if e.Tag == dwarf.TagSubprogram {
					for _, rg := range rs {
						l.funcs = append(l.funcs, funcRange{rg[0], rg[1], idx})
					}
				}
				cur = idx
			}
			if e.Children {
				if len(stack) > 1<<16 {
					return nil, errors.New("dwarf: tree deeper than 65536")
				}
				stack = append(stack, cur)
			}
		}
	}
	// Name every node after the entry it is, or the one it refers to.
	var resolve func(off dwarf.Offset, depth int) string
	resolve = func(off dwarf.Offset, depth int) string {
		n, ok := names[off]
		if !ok {
			return ""
		}
		if n.linkage != "" && !(strings.HasPrefix(n.linkage, "__GI_") && n.name != "") {
			// An asm label keeps the Mach-O underscore in
			// DW_AT_linkage_name: drop it as in the symbol table.
			if machO && (strings.HasPrefix(n.linkage, "__") || strings.HasPrefix(n.linkage, "_$")) {
				return n.linkage[1:]
			}
			return n.linkage
		}
		if n.name != "" {
			return n.name
		}
		if n.ref != 0 && depth < 8 {
			return resolve(n.ref, depth+1)
		}
		return ""
	}
	for i, off := range origin {
		n := names[off]
		name := ""
		if n.ref != 0 {
			name = resolve(n.ref, 0)
		}
		if name == "" {
			name = resolve(off, 8)
		}
		l.nodes[i].name = name
	}
	sort.SliceStable(l.rows, func(i, j int) bool {
		a, b := &l.rows[i], &l.rows[j]
		if a.addr != b.addr {
			return a.addr < b.addr
		}
		return a.end && !b.end
	})
	sort.Slice(l.funcs, func(i, j int) bool { return l.funcs[i].lo < l.funcs[j].lo })
	return l, nil
}

// line returns the file and line of addr from the line tables.
func (l *eagerDWARFLines) line(addr uint64) (file string, line int, ok bool) {
	i := sort.Search(len(l.rows), func(i int) bool { return l.rows[i].addr > addr }) - 1
	if i < 0 || l.rows[i].end || l.rows[i].file < 0 {
		return "", 0, false
	}
	return l.files[l.rows[i].file], int(l.rows[i].line), true
}

// Lines is what DWARFLines.Lines returned.
func (l *eagerDWARFLines) Lines(addr uint64) []Frame {
	file, line, hasLine := l.line(addr)
	i := sort.Search(len(l.funcs), func(i int) bool { return l.funcs[i].lo > addr }) - 1
	var chain []int32
	// Ranges do not usually overlap; look a few entries back in case.
	for k := 0; i >= 0 && k < 8; i, k = i-1, k+1 {
		if addr < l.funcs[i].hi {
			chain = append(chain, l.funcs[i].node)
			break
		}
	}
	if len(chain) == 0 {
		if !hasLine {
			return nil
		}
		return []Frame{{File: file, Line: line}}
	}
	for len(chain) < maxDWARFDepth {
		n := &l.nodes[chain[len(chain)-1]]
		next := int32(-1)
		for _, c := range n.children {
			if l.nodes[c].contains(addr) {
				next = c
				break
			}
		}
		if next < 0 {
			break
		}
		chain = append(chain, next)
	}
	out := make([]Frame, len(chain))
	for k := len(chain) - 1; k >= 0; k-- {
		f := &out[len(chain)-1-k]
		f.Function = l.nodes[chain[k]].name
		f.Inlined = k > 0
		if k == len(chain)-1 {
			if hasLine {
				f.File, f.Line = file, line
			}
			continue
		}
		inner := &l.nodes[chain[k+1]]
		if inner.callFile >= 0 {
			f.File = l.files[inner.callFile]
		}
		f.Line = int(inner.callLine)
	}
	return out
}

// aliases returns the names of the subprograms that start where the one
// holding addr starts and hold addr too: which of them Lines names was
// left to an unstable sort.
func (l *eagerDWARFLines) aliases(addr uint64) []string {
	i := sort.Search(len(l.funcs), func(i int) bool { return l.funcs[i].lo > addr }) - 1
	for k := 0; i >= 0 && k < 8; i, k = i-1, k+1 {
		if addr < l.funcs[i].hi {
			break
		}
	}
	if i < 0 || addr >= l.funcs[i].hi {
		return nil
	}
	var names []string
	for _, f := range l.funcs {
		if f.lo == l.funcs[i].lo && addr < f.hi {
			names = append(names, l.nodes[f.node].name)
		}
	}
	return names
}
