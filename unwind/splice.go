package unwind

// splice goes on with a walk of a small stack copy that ended where it
// needed a word past the copy (StopReadFailed) by taking the callers from
// stack.Chain, the kernel's frame-record walk of the same stack in the same
// sample, so that a kernel sample need copy only the frames the tables must
// unwind (frameless leaves, code without frame pointers) and not the whole
// stack. It does so only where that gives what the walk would have found
// with a copy of the whole stack:
//
//   - The walk ended at a frame whose FP is one of the kernel's records:
//     the records the kernel read from FP on are replayed from the copy,
//     each return address equal to the chain's, until one is FP's (the
//     frame's position) or the copy ends.
//   - That frame's rule, and the rule of every caller the chain gives
//     after it, is the frame-record one, or the code has no table or keeps
//     frame pointers (what WalkCFI follows through frame records too), up
//     to a frame the tables mark outermost, which ends the stack.
//
// Else the walk is returned as it ended. The frames taken are counted in
// Result.ChainFrames; a chain the kernel cut at its depth limit ends with
// StopMaxFrames. As with callchains alone, the records past the copy are
// the kernel's reading: their order in the stack is not checked. It
// allocates nothing.
func (w *Walker) splice(regs Regs, stack *Stack, tables Tables, out []uint64, res Result, s, half uint64) (_ []uint64, _ Result, _, _ uint64) {
	chain, n := stack.Chain, len(out)
	if n == 0 || len(chain) == 0 || res.afterReads > 0 || res.AfterSampleFrames > 0 || (n == 1 && w.arch == ArchARM64) {
		// On arm64 the interrupted frame's return address may be in
		// LR, which the kernel's chain does not hold.
		return out, res, s, half
	}
	at := res.at
	if at.look == 0 || at.fp&swiftAsyncMask != 0 || !w.keepsRecord(tables, at.look) {
		return out, res, s, half
	}
	// The kernel's records: the one at fp gives chain[k+1].
	c := newCopyReader(stack)
	fp, k := regs.FP, -1
	for i := 0; i < len(chain) && i < maxSpliceRecords; i++ {
		if fp == at.fp {
			k = i
			break
		}
		next, ok1 := c.word(fp)
		ret, ok2 := c.word(fp + 8)
		if !ok1 || !ok2 || i+1 >= len(chain) || ret&w.mask != chain[i+1]&w.mask {
			break
		}
		fp = next
	}
	if k < 0 {
		return out, res, s, half
	}
	rest := chain[k+1:]
	if len(rest) == 0 && !stack.ChainCut {
		return out, res, s, half // the kernel could not read the record either
	}
	// Check the callers before taking any.
	end, stop, cfi := len(rest), StopEnd, 0
	if r, _ := tables.Rule(at.look); r != nil {
		cfi++
	}
	if stack.ChainCut {
		stop = StopMaxFrames
	}
	for i, ret := range rest {
		if ret&w.mask == 0 {
			end, stop = i, StopEnd
			break
		}
		r, fpObj := tables.Rule(ret&w.mask - 1)
		switch {
		case fpObj:
			continue
		case r == nil && w.tablesOnly:
			end, stop = i+1, StopUnsupported
		case r == nil:
			continue
		case r.RA == RegUndefined:
			end, stop = i+1, StopEnd
		case !frameRecordRule(r):
			return out, res, s, half
		default:
			cfi++
			continue
		}
		break
	}
	limit, full := w.maxFrames, StopMaxFrames
	if cap(out) < limit {
		limit, full = cap(out), StopNoRoom
	}
	out = out[:n:limit]
	for _, ret := range rest[:end] {
		if len(out) >= limit {
			stop = full
			break
		}
		out = append(out, ret&w.mask)
		s, half = w.key.push(s, half, ret&w.mask, len(out))
		res.ChainFrames++
	}
	res.Stop, res.CFIFrames = stop, res.CFIFrames+cfi
	return out, res, s, half
}

// keepsRecord reports whether the frame whose rule is looked up at look is
// unwound through its frame record, as the kernel's chain is: its rule is
// the frame-record one, or its code has no table (and the walker follows
// records there) or keeps frame pointers.
func (w *Walker) keepsRecord(tables Tables, look uint64) bool {
	r, fpObj := tables.Rule(look)
	switch {
	case fpObj:
		return true
	case r == nil:
		return !w.tablesOnly
	}
	return frameRecordRule(r)
}

// maxSpliceRecords bounds the kernel's records splice replays from the
// copy (the kernel's own limit, perf_event_max_stack, is 127 by default).
const maxSpliceRecords = 1024
