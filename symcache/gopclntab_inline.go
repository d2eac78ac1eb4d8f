package symcache

// Go's inline tree: code the compiler inlined keeps, in the pc-file and
// pc-line tables of the function it was inlined into, the file:line of the
// inlined body; pcdata table PCDATA_InlTreeIndex (2) gives, per pc, an index
// into the function's inline tree (funcdata FUNCDATA_InlTree, 3), or -1
// outside inlined code. Each tree entry (runtime/symtabinl.go, inlinedCall;
// Go 1.20 and later) is 16 bytes: funcID uint8, 3 bytes of padding, nameOff
// int32 (into the function-name table), parentPc int32 (the offset from the
// function's entry of an instruction whose position is the call site) and
// startLine int32. Walking from the pc to entry+parentPc and looking the
// index up again gives the caller, until the index is -1: the physical
// function (runtime.inlineUnwinder, resolveInternal and next).
//
// Funcdata are uint32 offsets from go:func.* (moduledata.gofunc;
// runtime/symtab.go, funcdata), ^0 for none. The pclntab does not record
// where go:func.* is: the loaders find it (see goFuncFromModuledata) and
// hand it to SetGoFunc.

// Funcdata and pcdata indexes (internal/abi/symtab.go).
const (
	funcdataInlTree = 3
	inlinedCallSize = 16
	// maxInlineDepth bounds the inlined frames of one pc.
	maxInlineDepth = 64
)

// SetGoFunc gives the table go:func.* as data, the bytes from its start
// (to the end of its section, or less), so that Lines can walk the inline
// tree. It must be called before the table is shared. Only Go 1.20+
// tables use it: older inline trees have another layout.
func (t *Gopclntab) SetGoFunc(data []byte) {
	if t.go120 {
		t.gofunc = data
	}
}

// Inlines reports whether Lines expands inlined calls.
func (t *Gopclntab) Inlines() bool { return t.gofunc != nil }

// npcdata returns the number of pcdata tables of function i.
func (t *Gopclntab) npcdata(i uint32) uint32 {
	n, ok := t.funcField(i, 7)
	if !ok || n > 1<<10 {
		return 0
	}
	return n
}

// fixedWords is the number of uint32 words of _func after the entry field:
// the pcdata offsets follow them.
func (t *Gopclntab) fixedWords() uint64 {
	if t.go120 {
		return 10
	}
	return 9
}

// inlIndex returns the inline-tree index of pc in function i (entry
// entry), or -1 outside inlined code or where the tables do not say.
func (t *Gopclntab) inlIndex(i uint32, entry, pc uint64) int64 {
	if t.version == go12 || t.npcdata(i) <= pcdataInlTreeIndex {
		return -1
	}
	off, ok := t.funcField(i, t.fixedWords()+1+pcdataInlTreeIndex)
	if !ok || off == 0 {
		return -1
	}
	v, ok := t.pcvalue(off, entry, pc)
	if !ok || v < 0 {
		return -1
	}
	return v
}

// inlTree returns function i's inline tree (from go:func.*), or nil.
func (t *Gopclntab) inlTree(i uint32) []byte {
	if t.gofunc == nil {
		return nil
	}
	// nfuncdata is the last byte of the fixed part.
	w, ok := t.funcField(i, t.fixedWords())
	if !ok {
		return nil
	}
	var b [4]byte
	t.order.PutUint32(b[:], w)
	if nfd := b[3]; nfd <= funcdataInlTree {
		return nil
	}
	off, ok := t.funcField(i, t.fixedWords()+1+uint64(t.npcdata(i))+funcdataInlTree)
	if !ok || off == ^uint32(0) || uint64(off) >= uint64(len(t.gofunc)) {
		return nil
	}
	return t.gofunc[off:]
}

// inlineLines returns the frames of pc in function i, innermost first: one
// per inlined call and the physical function last (its Function left
// empty for the symbol table's name). ok is false when pc is in inlined
// code and the inline tree cannot be read.
func (t *Gopclntab) inlineLines(i uint32, entry, end, pc uint64) ([]Frame, bool) {
	idx := t.inlIndex(i, entry, pc)
	if idx < 0 {
		file, line, ok := t.fileLine(i, entry, pc)
		if !ok {
			return nil, true
		}
		return []Frame{{File: file, Line: line}}, true
	}
	tree := t.inlTree(i)
	if tree == nil {
		return nil, false
	}
	var out []Frame
	cur := pc
	for len(out) < maxInlineDepth {
		file, line, _ := t.fileLine(i, entry, cur)
		if idx < 0 {
			out = append(out, Frame{File: file, Line: line})
			return out, true
		}
		rec := uint64(idx) * inlinedCallSize
		if rec+inlinedCallSize > uint64(len(tree)) {
			return nil, false
		}
		r := tree[rec : rec+inlinedCallSize]
		name := cstring(t.names, uint64(t.order.Uint32(r[4:])))
		parent := int64(int32(t.order.Uint32(r[8:])))
		if name == "" || parent < 0 || entry+uint64(parent) >= end {
			return nil, false
		}
		out = append(out, Frame{Function: name, File: file, Line: line, Inlined: true})
		cur = entry + uint64(parent)
		idx = t.inlIndex(i, entry, cur)
	}
	return nil, false // deeper than maxInlineDepth: a loop
}

// goFuncFromModuledata finds go:func.* in a Go 1.20+ binary from its
// runtime.moduledata, whose first word points at the pclntab (pcHeader):
// it scans data (a section of initialised data) for a pointer-aligned word equal to pclntabAddr, checks
// that the text field (word 22) is the table's text start, and returns
// the gofunc field (word 40) (runtime/symtab.go, moduledata). A PIE's
// moduledata holds zeros until relocated: it is not found, and 0 is
// returned.
func goFuncFromModuledata(t *Gopclntab, data []byte, pclntabAddr uint64) uint64 {
	const textWord, gofuncWord = 22, 40
	ptr := uint64(t.ptrSize)
	word := func(off uint64) uint64 { return uintptrAt(t.order, t.ptrSize, data, off) }
	if pclntabAddr == 0 || !t.go120 {
		return 0
	}
	for off := uint64(0); off+(gofuncWord+1)*ptr <= uint64(len(data)); off += ptr {
		if word(off) != pclntabAddr {
			continue
		}
		if word(off+textWord*ptr) != t.textStart {
			continue
		}
		if g := word(off + gofuncWord*ptr); g != 0 {
			return g
		}
	}
	return 0
}

// fileLine returns the file and line at pc in function i from its pc-file
// and pc-line tables (the innermost inlined body's position).
func (t *Gopclntab) fileLine(i uint32, entry, pc uint64) (string, int, bool) {
	lnOff, ok1 := t.funcField(i, 6)
	fileOff, ok2 := t.funcField(i, 5)
	if !ok1 || !ok2 || lnOff == 0 {
		return "", 0, false
	}
	line, ok := t.pcvalue(lnOff, entry, pc)
	if !ok || line <= 0 || line > 1<<30 {
		return "", 0, false
	}
	fno, ok := t.pcvalue(fileOff, entry, pc)
	if !ok || fno < 0 || fno > 1<<30 {
		return "", int(line), true
	}
	var file string
	switch t.version {
	case go12:
		if fno > 0 && uint64(fno)*4+4 <= uint64(len(t.filetab12)) {
			file = cstring(t.names, uint64(t.order.Uint32(t.filetab12[fno*4:])))
		}
	default:
		if cu, ok := t.funcField(i, 8); ok {
			k := (uint64(cu) + uint64(fno)) * 4
			if k+4 <= uint64(len(t.cutab)) {
				if off := t.order.Uint32(t.cutab[k:]); off != ^uint32(0) {
					file = cstring(t.files, uint64(off))
				}
			}
		}
	}
	return file, int(line), true
}

// maxModuleSection bounds a data section scanned for moduledata.
const maxModuleSection = 64 << 20

// goFuncSource says where an object's sections are, for attachGoFunc.
type goFuncSource struct {
	pclntab     []byte // the pclntab's bytes
	pclntabAddr uint64 // its address
	// symbol is go:func.*'s address from the symbol table, 0 if unknown.
	symbol uint64
	// section reads an initialised data section by its ELF name
	// (.go.module, .noptrdata, .data; the Mach-O loader maps them to
	// __go_module, __noptrdata, __data), for runtime.moduledata.
	section func(name string) ([]byte, error)
	// sectionAt reads the section that holds addr, from addr to its end
	// (at most maxGopclntab bytes).
	sectionAt func(addr uint64) ([]byte, error)
}

// attachGoFunc finds go:func.* (from the symbol table, else from
// runtime.moduledata) and gives it to t, so that Lines expands inlined
// calls. Failing that, t stays without the inline tree.
func attachGoFunc(t *Gopclntab, src goFuncSource) {
	if !t.go120 {
		return
	}
	addr := src.symbol
	// runtime.firstmoduledata is in .go.module from Go 1.26
	// (cmd/link/internal/ld/data.go), in .noptrdata before.
	for _, name := range []string{".go.module", ".noptrdata", ".data"} {
		if addr != 0 || src.section == nil {
			break
		}
		if d, err := src.section(name); err == nil {
			addr = goFuncFromModuledata(t, d, src.pclntabAddr)
		}
	}
	if addr == 0 {
		return
	}
	// Go 1.26 places go:func.* inside the pclntab section
	// (cmd/link/internal/ld/data.go, the gopclntab section's symbols).
	if addr >= src.pclntabAddr && addr-src.pclntabAddr < uint64(len(src.pclntab)) {
		t.SetGoFunc(src.pclntab[addr-src.pclntabAddr:])
		return
	}
	if src.sectionAt != nil {
		if d, err := src.sectionAt(addr); err == nil && len(d) > 0 {
			t.SetGoFunc(d)
		}
	}
}
