package unwind

// ChainCheck is what CheckChain found of a stack walked by frame records.
type ChainCheck struct {
	// Trusted counts the leading addresses that are right.
	Trusted int
	// Whole: the stack ends where the trusted addresses end, as far as
	// the tables tell (no frame without a frame record cut it short).
	Whole bool
	// Confirmed: a table (or an object known to keep frame pointers)
	// vouched for every frame, none was taken on trust for want of one.
	Confirmed bool
}

// Exact reports whether the chain is what a walk with the tables gives.
func (c ChainCheck) Exact(n int) bool { return c.Trusted == n && c.Whole && c.Confirmed }

// CheckChain checks a stack walked by frame records somewhere else (the
// Linux kernel's user callchain, which perf_event takes in the sampled
// thread's own interrupt) against the unwind tables: such a walk is right
// only through frames that keep a frame record.
//
// Frame i's record gives address i+1: it is right when frame i's rule at
// its address is the frame-record one (CFA = FP + 16, return address at
// CFA - 8, caller's FP at CFA - 16, the same on amd64 and arm64) or its
// object keeps frame pointers (a Go binary). A frame without a table is
// taken as keeping one, as WalkCFI does, but not as confirmed. The first
// frame that keeps no record (a frameless leaf, whose caller's return
// address is at SP or in LR; code built without frame pointers) ends the
// trusted part with its own address, and the stack is not whole: the
// kernel read what follows from a record that is not its, or stopped
// there. An outermost frame (its return address undefined, as _start's)
// ends the stack whatever follows. It allocates nothing.
func CheckChain(pcs []uint64, tables Tables) ChainCheck {
	c := ChainCheck{Whole: true, Confirmed: true}
	for i, pc := range pcs {
		look := pc
		if i > 0 {
			look-- // a return address may follow the function's last instruction
		}
		r, fp := tables.Rule(look)
		switch {
		case fp:
		case r == nil:
			c.Confirmed = false
		case r.RA == RegUndefined:
			c.Trusted = i + 1
			return c
		case !frameRecordRule(r):
			c.Trusted, c.Whole, c.Confirmed = i+1, false, false
			return c
		}
	}
	c.Trusted = len(pcs)
	return c
}

// frameRecordRule reports whether r says the frame keeps a frame record
// that an FP walk reads correctly.
func frameRecordRule(r *Rule) bool {
	return r.CFA == CFAFP && r.CFAOff == 16 &&
		r.RA == RegSaved && r.RAOff == -8 &&
		r.FP == RegSaved && r.FPOff == -16
}
