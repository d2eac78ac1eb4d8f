package unwind

import (
	"encoding/binary"
	"unsafe"
)

// Tables finds the unwind rule of the code at an address. Rule returns the
// rule for pc (nil where no table covers it: no object there, no row, or
// a table not built yet) and whether pc lies in an object known to keep
// frame pointers (a Go binary). It must not allocate.
type Tables interface {
	Rule(pc uint64) (r *Rule, framePointers bool)
}

// WalkCFI walks the stack with the objects' unwind tables (DWARF CFI
// compiled by unwind/cfi), as Walk does with frame pointers, and with the
// same contract: PC and return addresses appended to dst[:0], never beyond
// its capacity, every value read treated as hostile, no allocation.
//
// A frame whose code no table covers (JIT code, an object whose table is
// not loaded yet) or whose object keeps frame pointers (a Go binary) is
// unwound through its frame record instead, so that code without tables
// walks as it does with Walk, and the walk goes back to the tables where
// a return address lands in code that has them (JIT code called from, and
// calling, compiled code); on arm64, when the interrupted PC itself has no
// table, the whole walk is Walk's, whose LR rule finds the caller of a
// leaf that keeps no record. A frame whose rule the table does not model
// (a CFA expression) ends the walk with StopUnsupported, except the
// interrupted frame on amd64, which is taken to have pushed nothing (a
// PLT stub, the usual case of such rules). Each frame's CFA must lie above
// the previous frame's (on arm64 a leaf's may equal it once, the return
// address being in LR), inside [stack.Lo, stack.Hi), so that the walk
// always ends. A register the table says is saved at a slot below the
// frame's stack pointer is taken as restored: an epilogue popped it (GCC
// keeps the save's rule to the function's end). Result.CFIFrames counts
// frames unwound with a table.
//
// Where the walk needs words above a kernel sample's copy and the stack
// has an After reader (and the walker no fallback), it reads them from the
// thread as it is now: the outer frames of a deep stack rarely change
// while the inner ones run. Each frame found so must still have a CFA
// above the last, and its return address must follow a call instruction
// in code a table covers (read through After too); the first that does
// not ends the walk (StopNotAfterCall, or the usual reason). The frames
// accepted follow AfterSampleMark in dst and are counted in
// Result.AfterSampleFrames.
func (w *Walker) WalkCFI(regs Regs, stack *Stack, tables Tables, dst []uint64) ([]uint64, Result) {
	if tables == nil {
		return w.Walk(regs, stack, dst)
	}
	mask := w.mask
	pc := regs.PC & mask
	r, fp := tables.Rule(pc)
	if fp || r == nil {
		if leaf := w.leafWithoutRecord(regs, stack, tables); leaf != nil {
			r, fp = leaf, false // the first frame by its rule, the rest by records
		}
	}
	if fp {
		out, res := w.Walk(regs, stack, dst)
		if (res.Stop != StopNotIncreasing && res.Stop != StopOutOfStack) || w.arch != ArchAMD64 || (w.fallback == nil && stack.After == nil) {
			return out, res
		}
		// A record on another stack: Go code on g0's stack, its
		// caller's record in the goroutine's (switchStack).
	} else if r == nil && (w.tablesOnly || w.arch == ArchARM64) {
		return w.noTable(regs, stack, dst)
	}
	var res Result
	out, s, half := w.walkCFI(regs, stack, tables, r, dst, &res)
	if res.Stop == StopReadFailed && stack.Chain != nil {
		out, res, s, half = w.splice(regs, stack, tables, out, res, s, half)
	}
	res.at = frameAt{}
	res.Hash = w.key.finish(s, half, len(out))
	return out, res
}

// LeafRules is implemented by Tables that know, for code walked by its
// frame records (Go's, which keeps frame pointers; a Linux vDSO with
// auto), the rule of an interrupted frame, which may not have set up its
// frame record yet or has taken it down (a leaf that makes none, a
// prologue, an epilogue): LeafRule returns it, nil where unknown. It must
// not allocate.
type LeafRules interface {
	LeafRule(pc uint64) *Rule
}

// leafWithoutRecord returns the rule to unwind the interrupted frame of
// code walked by frame records with (LeafRules), on amd64, when its frame
// record is not set up (FP is not CFA-16) and the rule, a CFA of SP plus
// an offset and FP the caller's (in the register, or pushed to CFA-16),
// gives a return address in code some table covers (right after a call,
// where the walk can read code); else nil, and the frame record at FP is
// the frame's.
func (w *Walker) leafWithoutRecord(regs Regs, stack *Stack, tables Tables) *Rule {
	lt, ok := tables.(LeafRules)
	if !ok || w.arch != ArchAMD64 {
		return nil
	}
	r := lt.LeafRule(regs.PC & w.mask)
	if r == nil || r.CFA != CFASP || r.RA != RegSaved || !(r.FP == RegSame || r.FP == RegSaved && r.FPOff == -16) || r.CFAOff <= 0 {
		return nil
	}
	cfa := regs.SP + uint64(r.CFAOff)
	if cfa < regs.SP || regs.FP == cfa-16 {
		return nil // the frame record at FP is this frame's
	}
	c := newCopyReader(stack)
	ret, ok := c.word(cfa + uint64(int64(r.RAOff)))
	if ret &= w.mask; !ok || ret < 8 || !w.covered(tables, ret-1) {
		return nil
	}
	reader := w.fallback
	if reader == nil {
		reader = stack.After
	}
	if reader != nil {
		if v, ok := readVia(reader, ret-8); ok && !FollowsCall(w.arch, v) {
			return nil
		}
	}
	return r
}

// noTable walks a stack whose interrupted code has no table: with frame
// records, or, with TablesOnly, not at all (the PC alone).
func (w *Walker) noTable(regs Regs, stack *Stack, dst []uint64) ([]uint64, Result) {
	if !w.tablesOnly {
		return w.Walk(regs, stack, dst)
	}
	dst = dst[:0]
	if cap(dst) == 0 || w.maxFrames == 0 {
		return dst, Result{Stop: StopNoRoom}
	}
	dst = append(dst, regs.PC&w.mask)
	return dst, Result{Stop: StopUnsupported, Hash: HashPCs(dst)}
}

// walkCFI does the work of WalkCFI into res, returning the hash state as
// walk does; r is the interrupted PC's rule, looked up already.
func (w *Walker) walkCFI(regs Regs, stack *Stack, tables Tables, r *Rule, dst []uint64, res *Result) (_ []uint64, s, half uint64) {
	dst = dst[:0]
	s = w.key.s
	limit, full := w.maxFrames, StopMaxFrames
	if cap(dst) < limit {
		limit, full = cap(dst), StopNoRoom
	}
	dst = dst[:limit]
	if limit == 0 {
		res.Stop = full
		return dst[:0], s, half
	}
	pc := regs.PC & w.mask
	dst[0] = pc
	c := newCopyReader(stack)
	return w.walkFrom(&c, tables, r, dst, full, 1, pc, regs.SP, regs.FP, regs.LR&w.mask, true, res, s, pc)
}

// walkFrom goes on with walkCFI's walk from the frame at pc (sp, fp, lr),
// dst[:n] filled, dst as long as the walk may go, into res; r0, when not
// nil, is the first frame's rule, looked up already.
func (w *Walker) walkFrom(c *copyReader, tables Tables, r0 *Rule, dst []uint64, full StopReason, n int, pc, sp, fp, lr uint64, first bool, res *Result, s, half uint64) (_ []uint64, _, _ uint64) {
	mask := w.mask
	arm := w.arch == ArchARM64
	limit := len(dst)
	// The frame the walk is at: its lookup address and FP (for splice,
	// through Result.at, set once the walk ends).
	var look, fp0 uint64
	cache := ruleCacheOf(tables)
	// sig: the frame just unwound was a signal frame, so the next one is
	// an interrupted frame, as the first is: its PC exact, not a return
	// address.
	sig := false
walk:
	for ; ; first, sig = sig, false {
		if !first && cache != nil && res.AfterSampleFrames == 0 && !c.empty {
			// As many frames as the fast loop takes: the last one's
			// CFA, now SP, is their highest.
			n0 := n
			if n, pc, sp, fp, s, half = w.walkCached(cache, c, dst, n, pc, sp, fp, s, half); n > n0 {
				res.CFIFrames += n - n0
				res.Top = max(res.Top, sp)
				lr = pc
			}
		}
		if n >= limit {
			res.Stop = full
			break walk
		}
		reads := res.afterReads
		// A return address points after its call, which may be the
		// last instruction of the function: look up the call's.
		look = pc
		if !first {
			look--
		}
		fp0 = fp
		rule, fpObj := r0, false
		if r0 == nil {
			// The cache's hit inline, without a call.
			if sl := cache.slotOf(look); sl.pc == look+1 {
				rule, fpObj = sl.rule, sl.fp
			} else {
				rule, fpObj = tables.Rule(look)
			}
		}
		r0 = nil
		ok := rule != nil
		var ret, cfa uint64
		var stop StopReason
		switch {
		case !ok && w.tablesOnly && !fpObj:
			res.Stop = StopUnsupported
			break walk
		case !ok:
			// No table: the frame record at FP.
			if ret, cfa, fp, stop = w.recordStep(c, sp, fp, res); stop != StopEnd || ret == 0 {
				if fpObj && (stop == StopNotIncreasing || stop == StopOutOfStack) {
					return w.switchStack(c, tables, dst, full, n, pc, fp0, lr, first, stop, res, s, half)
				}
				res.Stop = stop
				break walk
			}
		case rule.CFA == CFAUnsupported && first && !arm:
			// A PLT stub: the return address is at SP.
			cfa = sp + 8
			if ret, stop = w.readWord(c, sp, res); stop != StopEnd {
				res.Stop = stop
				break walk
			}
		default:
			if first && arm && rule.Body && frameRecordRule(rule) && w.lrIsCaller(c, tables, pc, fp, lr, res) {
				// In the prologue or the epilogue: the return address
				// is in LR, FP is the caller's.
				rule = &lrRule
			}
			switch rule.CFA {
			case CFASP:
				cfa = sp + uint64(int64(rule.CFAOff))
			case CFAFP:
				cfa = fp + uint64(int64(rule.CFAOff))
			case CFADerefSP, CFADerefFP:
				base := sp
				if rule.CFA == CFADerefFP {
					base = fp
				}
				if cfa, stop = w.readWord(c, base+uint64(int64(rule.CFAOff)), res); stop != StopEnd {
					if first && rule.CFA == CFADerefSP && rule.CFAOff < 0 && rule.RA == RegSaved && c.stack.Base == sp {
						res.at = frameAt{look, sp, fp}
						return w.scanReturn(c, tables, dst, full, n, sp, fp, rule, res, s, half)
					}
					res.Stop = stop
					break walk
				}
				cfa += uint64(int64(rule.CFAPlus))
			default:
				res.Stop = StopUnsupported
				break walk
			}
			if cfa < sp || (cfa == sp && !(arm && first && rule.RA == RegSame)) {
				res.Stop = StopNotIncreasing
				break walk
			}
			if cfa > c.stack.Hi || cfa < c.stack.Lo {
				res.Stop = StopOutOfStack
				break walk
			}
			res.Top = max(res.Top, cfa)
			switch rule.RA {
			case RegSaved:
				var ok bool
				if slot := cfa + uint64(int64(rule.RAOff)); slot < sp && arm && first {
					// Below the stack pointer: the epilogue loaded
					// LR from it already (as FP's below).
					ret = lr
				} else if ret, ok = c.word(slot); !ok {
					if ret, stop = w.readSlow(c.stack, slot, res); stop != StopEnd {
						res.Stop = stop
						break walk
					}
				}
			case RegSavedSP:
				// A signal frame's: in the ucontext above SP.
				if ret, stop = w.readWord(c, sp+uint64(int64(rule.RAOff)), res); stop != StopEnd {
					res.Stop = stop
					break walk
				}
			case RegSame:
				if !arm || !first {
					// arm64: only the interrupted function may
					// still hold its return address in LR.
					res.Stop = StopUnsupported
					break walk
				}
				ret = lr
			case RegUndefined:
				res.Stop, res.outermost = StopEnd, true // the outermost frame
				break walk
			default:
				res.Stop = StopUnsupported
				break walk
			}
			switch rule.FP {
			case RegSaved:
				var ok bool
				if slot := cfa + uint64(int64(rule.FPOff)); slot < sp {
					// Below the stack pointer, outside the frame: an
					// epilogue popped it already (GCC's tables keep
					// the save's rule to the function's end), so FP
					// holds the caller's value; a copy taken from SP
					// does not hold the slot.
				} else if fp, ok = c.word(slot); !ok {
					if fp, stop = w.readSlow(c.stack, slot, res); stop != StopEnd {
						res.Stop = stop
						break walk
					}
				}
			case RegSavedSP:
				if fp, stop = w.readWord(c, sp+uint64(int64(rule.FPOff)), res); stop != StopEnd {
					res.Stop = stop
					break walk
				}
			case RegSame:
			default:
				fp = 0 // unknown: a later frame that needs it stops
			}
			res.CFIFrames++
			// arm64's vDSO trampoline describes the frame record the
			// kernel writes in the signal frame: what it gives is the
			// interrupted LR, a return address, not the PC.
			sig = rule.Signal && !arm
		}
		ret &= mask
		if ret == 0 {
			res.Stop = StopEnd
			break walk
		}
		if res.afterReads != reads || res.AfterSampleFrames > 0 {
			// Read after the sample: checked, and marked where such
			// frames begin.
			if sig && !w.covered(tables, ret) || !sig && !w.afterCall(c.stack.After, tables, ret, !ok && fp == 0) {
				res.Stop = StopNotAfterCall
				break walk
			}
			if res.AfterSampleFrames == 0 {
				if n+1 >= limit {
					res.Stop = full
					break walk
				}
				dst[n] = AfterSampleMark
				n++
				s, half = w.key.push(s, half, AfterSampleMark, n)
			}
			res.AfterSampleFrames++
		}
		dst[n] = ret
		n++
		s, half = w.key.push(s, half, ret, n)
		pc, sp, lr = ret, cfa, ret
		if sig {
			lr = 0 // the interrupted LR lies in the ucontext, which no rule gives
		}
	}
	res.at = frameAt{look, sp, fp0}
	return dst[:n], s, half
}

// walkCached is walkFrom's loop for the frames it meets most: not the
// interrupted one, with a rule in the walk's rule cache whose CFA is SP or
// FP plus an offset, whose return address (and FP, where saved) lies in
// the stack copy, and nothing read after the sample. It unwinds such
// frames from pc (sp, fp), dst[:n] filled, with its state in registers,
// and returns where it stopped: at the first frame it does not take,
// which walkFrom's loop then unwinds, or ends the walk at, as it would
// have. Each frame's checks are walkFrom's: the CFA above SP (so the
// last frame's is the highest) and inside the stack. The rules are read
// from the cache's copies, beside the address they are kept for.
func (w *Walker) walkCached(cache *RuleCache, c *copyReader, dst []uint64, n int, pc, sp, fp, s, half uint64) (_ int, _, _, _, _, _ uint64) {
	if sp < c.stack.Lo {
		return n, pc, sp, fp, s, half // every CFA above sp is then above Lo too
	}
	mask, hi := w.mask, c.stack.Hi
	lo, span, at := c.lo, c.span, c.at
	for n < len(dst) {
		look := pc - 1
		sl := cache.slot(look)
		if sl.pc != look+1 || sl.rule == nil || sl.r.RA != RegSaved {
			break
		}
		var cfa uint64
		switch sl.r.CFA {
		case CFASP:
			cfa = sp + uint64(int64(sl.r.CFAOff))
		case CFAFP:
			cfa = fp + uint64(int64(sl.r.CFAOff))
		default:
			return n, pc, sp, fp, s, half
		}
		if cfa <= sp || cfa > hi {
			break
		}
		off := cfa + uint64(int64(sl.r.RAOff)) - lo
		if off > span {
			break
		}
		ret := *(*uint64)(unsafe.Add(at, off)) & mask // inside the copy (newCopyReader)
		if ret == 0 {
			break
		}
		next := fp
		switch sl.r.FP {
		case RegSaved:
			// A slot below SP: popped already (see walkFrom).
			if slot := cfa + uint64(int64(sl.r.FPOff)); slot >= sp {
				if off := slot - lo; off <= span {
					next = *(*uint64)(unsafe.Add(at, off))
				} else {
					return n, pc, sp, fp, s, half
				}
			}
		case RegSame:
		default:
			next = 0
		}
		dst[n] = ret
		n++
		s, half = w.key.push(s, half, ret, n)
		pc, sp, fp = ret, cfa, next
	}
	return n, pc, sp, fp, s, half
}

// switchStack goes on with a walk that met, in code that keeps frame
// pointers (Go), a frame record outside the stack it is walking: Go runs
// the vDSO, systemstack and cgo calls on the thread's g0 stack and keeps
// the caller's frame pointer across the switch, so the chain goes on in
// the goroutine's stack (as Go's own traceback and perf's callchains
// follow it). That stack lies outside the copy and its bounds are unknown:
// its words are read through the walker's fallback reader, else through
// stack.After (then marked and checked as read after the sample), in a
// window of switchSpan bytes from the record up, CFAs increasing again
// from there. At most maxSwitches switches a walk, so that it still ends;
// without a reader the walk ends with stop, as before.
func (w *Walker) switchStack(c *copyReader, tables Tables, dst []uint64, full StopReason, n int, pc, fp, lr uint64, first bool, stop StopReason, res *Result, s, half uint64) (_ []uint64, _, _ uint64) {
	if res.StackSwitches >= maxSwitches || fp == 0 || fp%8 != 0 || fp > ^uint64(0)-switchSpan || (w.fallback == nil && c.stack.After == nil) {
		res.Stop = stop
		return dst[:n], s, half
	}
	res.StackSwitches++
	reads, top := res.afterReads, res.Top
	sw := Stack{Base: fp, Lo: fp, Hi: fp + switchSpan, After: c.stack.After}
	sc := newCopyReader(&sw)
	out, s, half := w.walkFrom(&sc, tables, nil, dst, full, n, pc, fp, fp, lr, first, res, s, half)
	// What the walk read of the other stack is not what a larger copy of
	// this one would have held (Result.LeftCopy, Result.Top).
	res.afterReads, res.Top = reads, top
	if res.Stop == StopReadFailed {
		res.at = frameAt{}
	}
	return out, s, half
}

// The bounds of switchStack: the switches a walk crosses (a goroutine's
// stack to g0's, and a cgo callback's back), and the bytes of the other
// stack it may read, from the first record up.
const (
	maxSwitches = 2
	switchSpan  = AfterSampleSpan
)

// lrRule is the rule of an arm64 function that has not set up its frame
// record yet, or has taken it down: the return address in LR, SP and FP
// the caller's.
var lrRule = Rule{CFA: CFASP, RA: RegSame, FP: RegSame}

// lrIsCaller decides, for the interrupted arm64 frame of a function whose
// body keeps a frame record (a Body rule), whether the sample fell in its
// prologue before the record was set up or in its epilogue after it was
// taken down: then LR holds the return address and FP is still the
// caller's. It is so when LR is set, does not point into the function
// itself (which it does after the function made a call of its own), and
// differs from the return address in the record at FP. The same test
// without the bounds is Walk's.
func (w *Walker) lrIsCaller(c *copyReader, tables Tables, pc, fp, lr uint64, res *Result) bool {
	if lr == 0 {
		return false
	}
	if b, ok := tables.(FuncBounds); ok {
		if start, end, ok := b.Func(pc); ok && lr-1 >= start && lr-1 < end {
			return false
		}
	}
	ret, stop := w.readWord(c, fp+8, res)
	return stop != StopEnd || ret&w.mask != lr
}

// scanReturn unwinds the interrupted frame when its CFA is kept below the
// stack pointer, in the red zone, which a stack copy taken from the stack
// pointer does not hold (OpenSSL's AVX2 SHA-256 keeps the caller's SP at
// SP-8 through most of its loop; perf --call-graph dwarf stops there too).
// Such code saves that word in its frame too before copying it below SP,
// so it scans the copy upward from sp for a word that could be it: one
// that points into the scanned part of the copy above its own slot. The
// CFA it implies (the word plus CFAPlus) gives the return address's slot;
// a candidate is kept only if that holds code some table or frame-pointer
// object covers and the walk from there goes on to the frame the table
// marks outermost, to the frame limit, or through two more frames to a
// zero return address (a stale return address followed by a zero word
// would otherwise end a walk cleanly). At most scanWords words are read
// and scanTries candidates walked, so the cost is bounded; without a
// candidate the walk ends with StopBelowSP (not StopReadFailed: a larger
// copy would not help).
func (w *Walker) scanReturn(c *copyReader, tables Tables, dst []uint64, full StopReason, n int, sp, fp uint64, rule *Rule, res *Result, s, half uint64) (_ []uint64, _, _ uint64) {
	if n >= len(dst) {
		res.Stop = full
		return dst[:n], s, half
	}
	end := sp + 8*scanWords
	short := false // a read or a candidate's walk ended past the copy
	var try Result // a candidate's walk (declared here, so that it stays on the stack)
	for i, tries := uint64(0), 0; i < scanWords && tries < scanTries; i++ {
		p := sp + 8*i
		v, st := w.readWord(c, p, res)
		if st != StopEnd {
			short = st == StopReadFailed
			break
		}
		if v <= p || v >= end || v%8 != 0 {
			continue // not a pointer to a slot above this one
		}
		cfa := v + uint64(int64(rule.CFAPlus))
		a := cfa + uint64(int64(rule.RAOff)) // the return address's slot
		if cfa <= sp || cfa > c.stack.Hi || a <= p || a >= end {
			continue
		}
		ret, st := w.readWord(c, a, res)
		if ret &= w.mask; st != StopEnd || ret == 0 {
			short = short || st == StopReadFailed
			continue
		}
		if r, fpObj := tables.Rule(ret - 1); r == nil && !fpObj {
			continue
		}
		nfp := fp
		if rule.FP == RegSaved {
			if nfp, st = w.readWord(c, cfa+uint64(int64(rule.FPOff)), res); st != StopEnd {
				continue
			}
		}
		tries++
		try = *res
		try.CFIFrames++
		try.ScannedFrames++
		dst[n] = ret
		s2, half2 := w.key.push(s, half, ret, n+1)
		out, s3, half3 := w.walkFrom(c, tables, nil, dst, full, n+1, ret, cfa, nfp, ret, false, &try, s2, half2)
		if try.Stop == full || try.Stop == StopEnd && (try.outermost || len(out) >= n+3) {
			*res = try
			return out, s3, half3
		}
		short = short || try.Stop == StopReadFailed
	}
	res.Stop = StopBelowSP
	if short && c.stack.Chain != nil {
		// A hybrid sample's small copy (Stack.Chain): a whole copy might
		// have held the candidate, so the walk is cut as where it ends.
		res.Stop, res.at = StopReadFailed, frameAt{}
	}
	return dst[:n], s, half
}

// The bounds of scanReturn: the words of the copy it reads (4 KiB), and
// the candidates it walks.
const (
	scanWords = 512
	scanTries = 8
)

// recordStep unwinds one frame through the frame record at fp: it returns
// the return address, the caller's SP (just above the record) and FP, or
// why it cannot. The record must lie at or above sp and inside the stack.
func (w *Walker) recordStep(c *copyReader, sp, fp uint64, res *Result) (ret, cfa, next uint64, stop StopReason) {
	if fp&swiftAsyncMask == swiftAsyncFlag {
		fp &^= swiftAsyncMask
		res.AsyncFrames++
	}
	switch {
	case fp == 0:
		return 0, 0, 0, StopEnd
	case fp%8 != 0:
		return 0, 0, 0, StopMisaligned
	case fp < sp:
		return 0, 0, 0, StopNotIncreasing
	case fp < c.stack.Lo || c.stack.Hi < 16 || fp > c.stack.Hi-16:
		return 0, 0, 0, StopOutOfStack
	}
	if next, stop = w.readWord(c, fp, res); stop != StopEnd {
		return 0, 0, 0, stop
	}
	if ret, stop = w.readWord(c, fp+8, res); stop != StopEnd {
		return 0, 0, 0, stop
	}
	return ret, fp + 16, next, StopEnd
}

// copyReader reads words of one walk's stack copy: those wholly inside
// both the copy and the stack's bounds, [lo, lo+span], with one comparison
// and a plain load, the rest through readSlow. It is built once a walk so
// that the hot loads inline.
type copyReader struct {
	stack    *Stack
	at       unsafe.Pointer // the copy's byte at address lo
	lo, span uint64
	empty    bool // no word of the copy may be read
}

// newCopyReader returns the reader of stack's copy. Its fields are
// worked out apart and the struct built once, in its caller's frame (it
// inlines): a struct built whole, changed and copied is read back in
// wider loads than it was written in, which stalls.
func newCopyReader(stack *Stack) copyReader {
	at, lo, span, empty := copyWindow(stack)
	return copyReader{stack: stack, at: at, lo: lo, span: span, empty: empty}
}

// copyWindow returns the fields of stack's copyReader but the stack.
func copyWindow(stack *Stack) (at unsafe.Pointer, lo, span uint64, empty bool) {
	n := uint64(len(stack.Data))
	lo = max(stack.Lo, stack.Base)
	if stack.Base > ^uint64(0)-n {
		n = ^uint64(0) - stack.Base // a copy reaching the top of the address space
	}
	if n < 8 || stack.Hi < 8 {
		return nil, 0, 0, true
	}
	// The last address whose 8 bytes lie inside both.
	last := min(stack.Base+n-8, stack.Hi-8)
	if last < lo {
		return nil, 0, 0, true
	}
	// lo >= Base and last+8 <= Base+len(Data): every word of [lo,
	// lo+span] lies inside Data.
	return unsafe.Add(unsafe.Pointer(unsafe.SliceData(stack.Data)), lo-stack.Base), lo, last - lo, false
}

// readWord reads the 8 bytes at addr from the stack copy, or through the
// fallback reader when addr lies inside the stack's bounds but outside the
// copy. StopEnd means success. The copy's case inlines.
func (w *Walker) readWord(c *copyReader, addr uint64, res *Result) (uint64, StopReason) {
	if v, ok := c.word(addr); ok {
		return v, StopEnd
	}
	return w.readSlow(c.stack, addr, res)
}

// word reads the word at addr when it lies in [lo, lo+span]; walkFrom's
// hot loads call it directly, readWord being too large to inline.
func (c *copyReader) word(addr uint64) (uint64, bool) {
	if off := addr - c.lo; off <= c.span && !c.empty {
		// Inside Data (newCopyReader); amd64 and arm64 load
		// little-endian words at any alignment.
		return *(*uint64)(unsafe.Add(c.at, off)), true
	}
	return 0, false
}

// readSlow is readWord outside the copy.
func (w *Walker) readSlow(stack *Stack, addr uint64, res *Result) (uint64, StopReason) {
	if addr < stack.Lo || stack.Hi < 8 || addr > stack.Hi-8 {
		return 0, StopOutOfStack
	}
	if off := addr - stack.Base; addr >= stack.Base && off <= uint64(len(stack.Data)) && uint64(len(stack.Data))-off >= 8 {
		return binary.LittleEndian.Uint64(stack.Data[off:]), StopEnd
	}
	if w.fallback == nil {
		return readAfter(stack, addr, res)
	}
	res.FallbackReads++
	if v, ok := readVia(w.fallback, addr); ok {
		return v, StopEnd
	}
	return 0, StopReadFailed
}

// readAfter reads the word at addr through stack.After, which only words
// above the copy, at most AfterSampleSpan bytes past its end, may be.
func readAfter(stack *Stack, addr uint64, res *Result) (uint64, StopReason) {
	end := stack.Base + uint64(len(stack.Data))
	if stack.After == nil || end < stack.Base || addr < end || addr-end > AfterSampleSpan-8 {
		return 0, StopReadFailed
	}
	res.afterReads++
	if v, ok := readVia(stack.After, addr); ok {
		return v, StopEnd
	}
	return 0, StopReadFailed
}

// afterCall reports whether ret, a return address read after the sample,
// lies in code a table covers (or an object keeping frame pointers), right
// after a call instruction: the code before it is read through r. With
// last (a frame record that ends the chain) an amd64 goroutine's outermost
// return address passes too: code keeping frame pointers, right after a
// one-byte NOP (Go starts each goroutine returning to runtime.goexit+1,
// past the NOP that precedes its call).
func (w *Walker) afterCall(r MemoryReader, tables Tables, ret uint64, last bool) bool {
	if ret < 8 || r == nil {
		return false
	}
	rule, fp := tables.Rule(ret - 1)
	if rule == nil && !fp {
		return false
	}
	v, ok := readVia(r, ret-8)
	return ok && (FollowsCall(w.arch, v) || last && fp && w.arch == ArchAMD64 && v>>56 == 0x90)
}

// covered reports whether code some table covers, or an object that keeps
// frame pointers, lies at pc: what a signal frame's interrupted PC, read
// after the sample, must satisfy (it follows no call).
func (w *Walker) covered(tables Tables, pc uint64) bool {
	rule, fp := tables.Rule(pc)
	return rule != nil || fp
}

// readVia reads the little-endian word at addr through r, into one of
// recordBufs so that the read does not allocate.
func readVia(r MemoryReader, addr uint64) (uint64, bool) {
	for i := range recordBufs {
		b := &recordBufs[i]
		if b.busy.CompareAndSwap(false, true) {
			err := r.ReadMemory(addr, b.buf[:8])
			v := binary.LittleEndian.Uint64(b.buf[:8])
			b.busy.Store(false)
			return v, err == nil
		}
	}
	buf := make([]byte, 8)
	if err := r.ReadMemory(addr, buf); err != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(buf), true
}
