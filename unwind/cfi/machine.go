package cfi

import (
	"math"

	"github.com/macprof/macprof/unwind"
)

// regState is the rule of one tracked register while a program runs.
type regState struct {
	rule unwind.RegRule
	set  bool // a rule was given (else the architecture's default applies)
	off  int64
}

// rowState is the state of the row being built: the CFA and the two
// registers the table keeps.
type rowState struct {
	cfaReg  uint64
	cfaOff  int64
	cfaExpr bool // an expression the table does not model
	// cfaDeref: CFA = *(cfaReg + cfaOff) + cfaPlus, the one expression
	// form the table models.
	cfaDeref bool
	cfaPlus  int64
	fp, ra   regState
}

// machine runs CIE and FDE programs. Its buffers are reused from FDE to
// FDE.
type machine struct {
	arch  unwind.Arch
	eh    bool // running .eh_frame programs
	stack []rowState
	rows  []Row
	// arena is where FDEs' rows are kept, chunk (else rowChunk) at a
	// time: one allocation per chunk rather than per FDE.
	arena []Row
	chunk int
}

// rowChunk is how many rows the machine allocates at once for its FDEs.
const rowChunk = 4096

// fde parses an FDE body and runs its CIE's initial instructions and its
// own, producing its rows in file offsets.
func (m *machine) fde(c *cie, body []byte, bodyAddr uint64, sec Section, segs []Segment) (span, bool) {
	r := &reader{b: body}
	var start, size uint64
	if sec.EH {
		var ok bool
		start, ok = r.pointer(c.fdeEnc, bodyAddr, true)
		if !ok {
			return span{}, false
		}
		size, _ = r.pointer(c.fdeEnc&peFormat, bodyAddr, false)
	} else if c.addrSize == 4 {
		start, size = uint64(r.u32()), uint64(r.u32())
	} else {
		start, size = r.u64(), r.u64()
	}
	if c.augZ {
		n := r.uleb()
		r.bytes(n)
	}
	if r.err != nil || size == 0 {
		return span{}, false
	}
	off, ok := toOffset(segs, start, size)
	if !ok {
		return span{}, false
	}
	// The CIE's instructions set the initial state, which DW_CFA_restore
	// goes back to; they run once per CIE.
	if !c.ran {
		m.stack = m.stack[:0]
		c.init, c.initOK = m.run(c, c.initial, rowState{}, nil, 0, 0)
		c.ran = true
	}
	if !c.initOK {
		return span{}, false
	}
	init := c.init
	m.rows = m.rows[:0]
	m.stack = m.stack[:0]
	_, ok = m.run(c, body[r.pos:], init, &init, start, size)
	if !ok {
		return span{}, false
	}
	// Rows were emitted at each location change with the state before
	// it, and at the end; convert them to file offsets.
	n := len(m.rows)
	if cap(m.arena)-len(m.arena) < n {
		chunk := m.chunk
		if chunk <= 0 {
			chunk = rowChunk
		}
		m.arena = make([]Row, 0, max(chunk, n))
	}
	rows := m.arena[len(m.arena) : len(m.arena)+n : len(m.arena)+n]
	m.arena = m.arena[:len(m.arena)+n]
	for i, row := range m.rows {
		rows[i] = Row{Off: row.Off - start + off, Rule: row.Rule}
	}
	return span{start: off, end: off + size, rows: rows}, true
}

// emit records the row at loc (a virtual address) with state st, replacing
// a row at the same address.
func (m *machine) emit(c *cie, loc uint64, st rowState) {
	rule := m.rule(c, st)
	if n := len(m.rows); n > 0 && m.rows[n-1].Off == loc {
		m.rows[n-1].Rule = rule
		return
	}
	m.rows = append(m.rows, Row{Off: loc, Rule: rule})
}

// rule reduces a row state to a Rule.
func (m *machine) rule(c *cie, st rowState) unwind.Rule {
	var r unwind.Rule
	spReg, fpReg := uint64(regAMD64SP), uint64(regAMD64FP)
	if m.arch == unwind.ArchARM64 {
		spReg, fpReg = regARM64SP, regARM64FP
	}
	switch {
	case st.cfaExpr || st.cfaOff < math.MinInt32 || st.cfaOff > math.MaxInt32 || st.cfaPlus < math.MinInt32 || st.cfaPlus > math.MaxInt32:
		r.CFA = unwind.CFAUnsupported
	case st.cfaDeref && st.cfaReg == spReg:
		r.CFA, r.CFAOff, r.CFAPlus = unwind.CFADerefSP, int32(st.cfaOff), int32(st.cfaPlus)
	case st.cfaDeref && st.cfaReg == fpReg:
		r.CFA, r.CFAOff, r.CFAPlus = unwind.CFADerefFP, int32(st.cfaOff), int32(st.cfaPlus)
	case st.cfaDeref:
		r.CFA = unwind.CFAUnsupported
	case st.cfaReg == spReg:
		r.CFA, r.CFAOff = unwind.CFASP, int32(st.cfaOff)
	case st.cfaReg == fpReg:
		r.CFA, r.CFAOff = unwind.CFAFP, int32(st.cfaOff)
	default:
		r.CFA = unwind.CFAUnsupported
	}
	r.FP, r.FPOff = reduce(st.fp, unwind.RegSame)
	raDefault := unwind.RegUnsupported
	if m.arch == unwind.ArchARM64 && c.raReg == regARM64LR {
		raDefault = unwind.RegSame // the return address is still in LR
	}
	r.RA, r.RAOff = reduce(st.ra, raDefault)
	r.Signal = c.signal
	if r.RA == unwind.RegSame && !(m.arch == unwind.ArchARM64 && c.raReg == regARM64LR) {
		r.RA = unwind.RegUnsupported
	}
	return r
}

// reduce maps a register state to a rule, def when none was given.
func reduce(s regState, def unwind.RegRule) (unwind.RegRule, int32) {
	if !s.set {
		return def, 0
	}
	if s.rule == unwind.RegSaved || s.rule == unwind.RegSavedSP {
		if s.off < math.MinInt32 || s.off > math.MaxInt32 {
			return unwind.RegUnsupported, 0
		}
		return s.rule, int32(s.off)
	}
	return s.rule, 0
}

// DWARF call-frame instructions (DW_CFA_*).
const (
	cfaAdvanceLoc        = 0x40
	cfaOffset            = 0x80
	cfaRestore           = 0xc0
	cfaNop               = 0x00
	cfaSetLoc            = 0x01
	cfaAdvanceLoc1       = 0x02
	cfaAdvanceLoc2       = 0x03
	cfaAdvanceLoc4       = 0x04
	cfaOffsetExtended    = 0x05
	cfaRestoreExtended   = 0x06
	cfaUndefined         = 0x07
	cfaSameValue         = 0x08
	cfaRegister          = 0x09
	cfaRememberState     = 0x0a
	cfaRestoreState      = 0x0b
	cfaDefCFA            = 0x0c
	cfaDefCFARegister    = 0x0d
	cfaDefCFAOffset      = 0x0e
	cfaDefCFAExpression  = 0x0f
	cfaExpression        = 0x10
	cfaOffsetExtendedSF  = 0x11
	cfaDefCFASF          = 0x12
	cfaDefCFAOffsetSF    = 0x13
	cfaValOffset         = 0x14
	cfaValOffsetSF       = 0x15
	cfaValExpression     = 0x16
	cfaAArch64NegateRA   = 0x2d // also DW_CFA_GNU_window_save (SPARC)
	cfaGNUArgsSize       = 0x2e
	cfaGNUNegOffsetExt   = 0x2f
	cfaLoUser, cfaHiUser = 0x1c, 0x3f
)

// run executes a program from state st. In an FDE (init non-nil) it emits a
// row each time the location advances, and locations stay inside [start,
// start+size); ok is false for a program it cannot run (an unknown
// instruction, a truncated one, restore_state with nothing remembered is
// ignored). Every instruction consumes at least one byte, so run ends.
func (m *machine) run(c *cie, prog []byte, st rowState, init *rowState, start, size uint64) (rowState, bool) {
	r := &reader{b: prog}
	loc := start
	fpReg, spReg := uint64(regAMD64FP), uint64(regAMD64SP)
	if m.arch == unwind.ArchARM64 {
		fpReg, spReg = regARM64FP, regARM64SP
	}
	reg := func(n uint64) *regState {
		switch n {
		case fpReg:
			return &st.fp
		case c.raReg:
			return &st.ra
		}
		return nil
	}
	initial := func(n uint64) regState {
		if init == nil {
			return regState{}
		}
		switch n {
		case fpReg:
			return init.fp
		case c.raReg:
			return init.ra
		}
		return regState{}
	}
	advance := func(delta uint64) bool {
		if init == nil {
			return true // the CIE's program has no locations
		}
		if delta > math.MaxUint64/c.codeAlign {
			return false
		}
		d := delta * c.codeAlign
		if d >= size-(loc-start) {
			// Past the FDE's end: the rest does not apply.
			loc = start + size
			return true
		}
		m.emit(c, loc, st)
		loc += d
		return true
	}
	for r.left() > 0 {
		if loc >= start+size && init != nil {
			break
		}
		op := r.u8()
		switch op & 0xc0 {
		case cfaAdvanceLoc:
			if !advance(uint64(op & 0x3f)) {
				return st, false
			}
			continue
		case cfaOffset:
			off := int64(r.uleb()) * c.dataAlign
			if p := reg(uint64(op & 0x3f)); p != nil {
				*p = regState{rule: unwind.RegSaved, set: true, off: off}
			}
			continue
		case cfaRestore:
			n := uint64(op & 0x3f)
			if p := reg(n); p != nil {
				*p = initial(n)
			}
			continue
		}
		switch op {
		case cfaNop:
		case cfaSetLoc:
			var v uint64
			switch {
			case m.eh && c.fdeEnc&peApply != 0:
				return st, false // relative locations: never emitted by compilers
			case m.eh:
				v, _ = r.pointer(c.fdeEnc, 0, false)
			case c.addrSize == 4:
				v = uint64(r.u32())
			default:
				v = r.u64()
			}
			if init != nil {
				if v < loc || v-start >= size {
					return st, false // locations only move forward, inside the FDE
				}
				m.emit(c, loc, st)
				loc = v
			}
		case cfaAdvanceLoc1:
			if !advance(uint64(r.u8())) {
				return st, false
			}
		case cfaAdvanceLoc2:
			if !advance(uint64(r.u16())) {
				return st, false
			}
		case cfaAdvanceLoc4:
			if !advance(uint64(r.u32())) {
				return st, false
			}
		case cfaOffsetExtended:
			n, off := r.uleb(), int64(r.uleb())*c.dataAlign
			if p := reg(n); p != nil {
				*p = regState{rule: unwind.RegSaved, set: true, off: off}
			}
		case cfaOffsetExtendedSF:
			n, off := r.uleb(), r.sleb()*c.dataAlign
			if p := reg(n); p != nil {
				*p = regState{rule: unwind.RegSaved, set: true, off: off}
			}
		case cfaGNUNegOffsetExt:
			n, off := r.uleb(), -int64(r.uleb())*c.dataAlign
			if p := reg(n); p != nil {
				*p = regState{rule: unwind.RegSaved, set: true, off: off}
			}
		case cfaRestoreExtended:
			n := r.uleb()
			if p := reg(n); p != nil {
				*p = initial(n)
			}
		case cfaUndefined:
			if p := reg(r.uleb()); p != nil {
				*p = regState{rule: unwind.RegUndefined, set: true}
			}
		case cfaSameValue:
			if p := reg(r.uleb()); p != nil {
				*p = regState{rule: unwind.RegSame, set: true}
			}
		case cfaRegister:
			n := r.uleb()
			r.uleb()
			if p := reg(n); p != nil {
				*p = regState{rule: unwind.RegUnsupported, set: true}
			}
		case cfaValOffset, cfaValOffsetSF:
			n := r.uleb()
			if op == cfaValOffset {
				r.uleb()
			} else {
				r.sleb()
			}
			if p := reg(n); p != nil {
				*p = regState{rule: unwind.RegUnsupported, set: true}
			}
		case cfaExpression, cfaValExpression:
			n := r.uleb()
			expr := r.bytes(r.uleb())
			if p := reg(n); p != nil {
				*p = regState{rule: unwind.RegUnsupported, set: true}
				if b, off, ok := bregExpr(expr); ok && op == cfaExpression && b == spReg {
					*p = regState{rule: unwind.RegSavedSP, set: true, off: off}
				}
			}
		case cfaRememberState:
			if len(m.stack) >= maxStateStack {
				return st, false
			}
			m.stack = append(m.stack, st)
		case cfaRestoreState:
			if n := len(m.stack); n > 0 {
				// The whole row, the CFA included (DWARF 5
				// section 6.4.2.4, as libgcc does).
				st = m.stack[n-1]
				m.stack = m.stack[:n-1]
			}
		case cfaDefCFA:
			st.cfaReg, st.cfaOff, st.cfaExpr, st.cfaDeref = r.uleb(), int64(r.uleb()), false, false
		case cfaDefCFASF:
			st.cfaReg, st.cfaOff, st.cfaExpr, st.cfaDeref = r.uleb(), r.sleb()*c.dataAlign, false, false
		case cfaDefCFARegister:
			st.cfaReg = r.uleb()
			st.cfaExpr = st.cfaExpr || st.cfaDeref // only valid after a register rule
		case cfaDefCFAOffset:
			st.cfaOff = int64(r.uleb())
			st.cfaExpr = st.cfaExpr || st.cfaDeref
		case cfaDefCFAOffsetSF:
			st.cfaOff = r.sleb() * c.dataAlign
			st.cfaExpr = st.cfaExpr || st.cfaDeref
		case cfaDefCFAExpression:
			expr := r.bytes(r.uleb())
			if reg, off, plus, ok := derefExpr(expr); ok {
				st.cfaReg, st.cfaOff, st.cfaPlus, st.cfaDeref, st.cfaExpr = reg, off, plus, true, false
			} else {
				st.cfaExpr, st.cfaDeref = true, false
			}
		case cfaGNUArgsSize:
			r.uleb()
		case cfaAArch64NegateRA:
			// arm64: the return address is signed from here on; the
			// walker strips pointer-authentication bits anyway.
		default:
			return st, false
		}
		if r.err != nil {
			return st, false
		}
	}
	if r.err != nil {
		return st, false
	}
	if init != nil && loc < start+size {
		m.emit(c, loc, st)
	}
	return st, true
}

// DWARF expression operations derefExpr recognizes.
const (
	opBreg0      = 0x70
	opBreg31     = 0x8f
	opDeref      = 0x06
	opPlusUconst = 0x23
)

// bregExpr recognizes the register-location expression "DW_OP_bregN
// off", the one form a signal frame's registers take (glibc's
// __restore_rt: each at the frame's SP plus its offset in the ucontext).
func bregExpr(expr []byte) (reg uint64, off int64, ok bool) {
	r := &reader{b: expr}
	op := r.u8()
	if op < opBreg0 || op > opBreg31 {
		return 0, 0, false
	}
	reg, off = uint64(op-opBreg0), r.sleb()
	return reg, off, r.err == nil && r.left() == 0
}

// derefExpr recognizes the CFA expression "DW_OP_bregN off; DW_OP_deref"
// with an optional "DW_OP_plus_uconst plus" (a CFA saved on a realigned
// stack, as OpenSSL's and glibc's assembly write it).
func derefExpr(expr []byte) (reg uint64, off, plus int64, ok bool) {
	r := &reader{b: expr}
	op := r.u8()
	if op < opBreg0 || op > opBreg31 {
		return 0, 0, 0, false
	}
	reg, off = uint64(op-opBreg0), r.sleb()
	if r.u8() != opDeref {
		return 0, 0, 0, false
	}
	if r.left() > 0 {
		if r.u8() != opPlusUconst {
			return 0, 0, 0, false
		}
		p := r.uleb()
		if p > math.MaxInt32 {
			return 0, 0, 0, false
		}
		plus = int64(p)
	}
	return reg, off, plus, r.err == nil && r.left() == 0
}
