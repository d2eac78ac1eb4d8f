package cfi

import (
	"bytes"
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/macprof/macprof/internal/objfile"
	"github.com/macprof/macprof/unwind"
)

// ehIndex finds an object's FDEs through the binary search table of its
// .eh_frame_hdr and compiles each FDE into rows on the first lookup that
// lands in it. A sampled process runs tens to hundreds of an object's
// thousands of functions, so this costs a small part of compiling every
// FDE at load (python3.11 has over ten thousand), the CPU a profiler would
// otherwise take from the target's first second.
//
// The search table is used only when it has the one layout linkers write
// (entries of two 4-byte values relative to the header, sorted by
// location); otherwise the object's table is built whole. A lookup of a
// compiled FDE reads without locking and does not allocate; compiling one
// takes the index's lock.
type ehIndex struct {
	sec  Section // .eh_frame
	segs []Segment
	// table holds count entries of 8 bytes: the initial location and the
	// FDE's address, each an int32 relative to hdrAddr.
	table   []byte
	count   int
	hdrAddr uint64
	// fdes holds the compiled FDEs by entry, in chunks of fdeChunk
	// allocated as their first FDE is compiled: a snapshot compiles a
	// few of libc's thousands.
	fdes []atomic.Pointer[[fdeChunk]atomic.Pointer[fdeRows]]

	mu    sync.Mutex // held while compiling
	m     machine
	cies  map[uint64]*cie
	byOff map[uint64]*fdeRows // compiled FDEs by section offset: entries may share one
	rows  atomic.Int64        // rows compiled
	// mapped: sec.Data and table lie in a mapping of the file (Load),
	// which faults if the file shrinks, so lookups and compiling run
	// with objfile.PanicOnFault set.
	mapped bool
}

// fdeChunk is how many entries' compiled FDEs are allocated at once.
const fdeChunk = 64

// fdeRows is one compiled FDE, in file offsets: rows[i] applies from
// rows[i].Off up to the next row or end. No rows: the FDE cannot be used.
type fdeRows struct {
	start, end uint64
	rows       []Row
}

// lazyRowChunk is how many rows an index's machine allocates at once.
const lazyRowChunk = 256

// The .eh_frame_hdr layout newIndex accepts.
const (
	hdrVersion  = 1
	hdrTableEnc = peDataRel | peS4 // what GNU ld, gold and lld write
)

// newIndex returns the index of eh through the .eh_frame_hdr hdr loaded at
// hdrAddr, or nil where hdr is not one it can search: another layout, a
// table running past its end or longer than eh could need, or out of
// order. (An entry pointing at no usable FDE is found out when compiled.)
func newIndex(arch unwind.Arch, eh Section, hdr []byte, hdrAddr uint64, segs []Segment) *ehIndex {
	return indexOf(arch, eh, hdr, hdrAddr, segs, false)
}

// indexOf is newIndex, with mapped telling that eh and hdr lie in a
// mapping of their file (read with objfile.PanicOnFault set): the index
// then reads hdr's table in place instead of copying it.
func indexOf(arch unwind.Arch, eh Section, hdr []byte, hdrAddr uint64, segs []Segment, mapped bool) *ehIndex {
	if len(hdr) < 4 || hdr[0] != hdrVersion || hdr[3] != hdrTableEnc {
		return nil
	}
	r := &reader{b: hdr, pos: 4}
	if _, ok := r.pointer(hdr[1], hdrAddr, true); !ok || hdr[1] == peOmit {
		return nil // the .eh_frame pointer
	}
	n, ok := r.pointer(hdr[2], hdrAddr, true)
	if !ok || hdr[2] == peOmit || r.err != nil {
		return nil
	}
	table := hdr[r.pos:]
	// Every FDE takes at least 16 bytes of .eh_frame: a table longer than
	// that allows is not this section's.
	if n > uint64(len(table)/8) || n > uint64(len(eh.Data)/16) {
		return nil
	}
	table = table[: 8*n : 8*n]
	if !mapped {
		// A copy: the header may be much longer than its table.
		table = bytes.Clone(table)
	}
	x := &ehIndex{sec: eh, segs: segs, table: table, count: int(n), hdrAddr: hdrAddr, mapped: mapped}
	for i := 1; i < x.count; i++ {
		if x.loc(i) < x.loc(i-1) {
			return nil
		}
	}
	x.fdes = make([]atomic.Pointer[[fdeChunk]atomic.Pointer[fdeRows]], (x.count+fdeChunk-1)/fdeChunk)
	// Rows in small chunks: an index compiles few FDEs, a whole build
	// all of them.
	x.m.arch, x.m.eh, x.m.chunk = arch, true, lazyRowChunk
	x.cies = map[uint64]*cie{}
	x.byOff = map[uint64]*fdeRows{}
	return x
}

// loc returns the initial location (a virtual address) of entry i.
func (x *ehIndex) loc(i int) uint64 {
	return x.hdrAddr + uint64(int64(int32(binary.LittleEndian.Uint32(x.table[8*i:]))))
}

// fdeAddr returns the address of entry i's FDE.
func (x *ehIndex) fdeAddr(i int) uint64 {
	return x.hdrAddr + uint64(int64(int32(binary.LittleEndian.Uint32(x.table[8*i+4:]))))
}

// find returns the rule for file offset off and whether an FDE of the
// index covers off (if not, another section may). The rule must not be
// modified.
func (x *ehIndex) find(off uint64) (r *unwind.Rule, covered bool) {
	if x.mapped {
		return x.findGuarded(off)
	}
	return x.search(off)
}

// findGuarded is find over a mapping: a fault (the file shrank) finds
// nothing.
func (x *ehIndex) findGuarded(off uint64) (r *unwind.Rule, covered bool) {
	var err error
	defer objfile.RecoverFault(&err, objfile.PanicOnFault())
	return x.search(off)
}

// search is find.
func (x *ehIndex) search(off uint64) (r *unwind.Rule, covered bool) {
	vaddr, ok := toVaddr(x.segs, off)
	if !ok || x.count == 0 {
		return nil, false
	}
	// The last entry starting at or before vaddr.
	i, j := 0, x.count
	for i < j {
		m := int(uint(i+j) >> 1)
		if x.loc(m) <= vaddr {
			i = m + 1
		} else {
			j = m
		}
	}
	if i == 0 {
		return nil, false
	}
	f := x.compiled(i - 1)
	if f == nil {
		f = x.compile(i - 1)
	}
	return f.find(off)
}

// compiled returns entry i's compiled FDE, nil if not compiled yet.
func (x *ehIndex) compiled(i int) *fdeRows {
	if c := x.fdes[i/fdeChunk].Load(); c != nil {
		return c[i%fdeChunk].Load()
	}
	return nil
}

// find returns the rule of the compiled FDE f at file offset off and
// whether f covers off.
func (f *fdeRows) find(off uint64) (r *unwind.Rule, covered bool) {
	if off < f.start || off >= f.end || len(f.rows) == 0 {
		return nil, false
	}
	// The last row starting at or before off (rows[0] starts at start).
	rows := f.rows
	k, l := 0, len(rows)
	for k < l {
		m := int(uint(k+l) >> 1)
		if rows[m].Off <= off {
			k = m + 1
		} else {
			l = m
		}
	}
	if k == 0 {
		return nil, true
	}
	if r = &rows[k-1].Rule; r.CFA == unwind.CFANone {
		return nil, true
	}
	return r, true
}

// compile compiles entry i's FDE, once: entries naming the same FDE share
// its rows, and once the rows compiled reach twice the section's bytes (no
// real section comes near: a row takes at least one byte of program) no
// more are compiled, so that crafted entries cannot make the rows grow
// faster than the section.
func (x *ehIndex) compile(i int) *fdeRows {
	x.mu.Lock()
	defer x.mu.Unlock()
	if f := x.compiled(i); f != nil {
		return f
	}
	pos := x.fdeAddr(i) - x.sec.Addr
	f, ok := x.byOff[pos]
	if !ok {
		f = &fdeRows{}
		if x.rows.Load() < 2*int64(len(x.sec.Data)) {
			f = x.parseGuarded(i, pos)
		}
		x.byOff[pos] = f
		x.rows.Add(int64(len(f.rows)))
	}
	c := x.fdes[i/fdeChunk].Load()
	if c == nil {
		c = new([fdeChunk]atomic.Pointer[fdeRows])
		x.fdes[i/fdeChunk].Store(c)
	}
	c[i%fdeChunk].Store(f)
	return f
}

// parseGuarded is parse, where .eh_frame lies in a mapping of its file
// with a fault (the file shrank) making the FDE unusable.
func (x *ehIndex) parseGuarded(i int, pos uint64) *fdeRows {
	if !x.mapped {
		return x.parse(i, pos)
	}
	var f *fdeRows
	err := func() (err error) {
		defer objfile.RecoverFault(&err, objfile.PanicOnFault())
		f = x.parse(i, pos)
		return nil
	}()
	if err != nil {
		return &fdeRows{}
	}
	return f
}

// parse runs entry i's FDE, at section offset pos, and keeps its rows in
// order inside its range. An FDE that does not start where the entry says
// is not used: the header is not this section's.
func (x *ehIndex) parse(i int, pos uint64) *fdeRows {
	none := &fdeRows{}
	if pos >= uint64(len(x.sec.Data)) {
		return none
	}
	rec, _, ok := recordAt(x.sec.Data, int(pos), true)
	if !ok || rec.cie {
		return none
	}
	c := cieOf(x.cies, rec, x.sec)
	if c == nil {
		return none
	}
	s, ok := x.m.fde(c, rec.body, x.sec.Addr+uint64(rec.at), x.sec, x.segs)
	if !ok {
		return none
	}
	if start, ok := toOffset(x.segs, x.loc(i), 0); !ok || start != s.start {
		return none
	}
	rows := s.rows[:0]
	for _, row := range s.rows {
		if n := len(rows); (n == 0 || row.Off > rows[n-1].Off) && row.Off >= s.start && row.Off < s.end {
			rows = append(rows, row)
		}
	}
	return &fdeRows{start: s.start, end: s.end, rows: rows}
}

// compileAll compiles every FDE not compiled yet.
func (x *ehIndex) compileAll() {
	for i := range x.count {
		if x.compiled(i) == nil {
			x.compile(i)
		}
	}
}

// spans compiles every FDE of the index and returns them, in entry order.
func (x *ehIndex) spans() []span {
	x.compileAll()
	out := make([]span, 0, x.count)
	for i := range x.count {
		if f := x.compiled(i); len(f.rows) > 0 {
			out = append(out, span{start: f.start, end: f.end, rows: f.rows})
		}
	}
	return out
}

// bytes returns the index's approximate size in memory: the section, the
// search table, a pointer per entry, and 32 bytes a compiled row (a whole
// build keeps about 6).
func (x *ehIndex) bytes() int {
	return len(x.sec.Data) + len(x.table) + 8*x.count + 32*int(x.rows.Load())
}

// toVaddr converts a file offset to the virtual address a segment loads
// it at.
func toVaddr(segs []Segment, off uint64) (uint64, bool) {
	for _, s := range segs {
		if off >= s.Off && off-s.Off < s.Size {
			return off - s.Off + s.Vaddr, true
		}
	}
	return 0, false
}
