package compact

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/macprof/macprof/unwind"
)

// Image places one image's table in a process: its code lies in
// [Start, End) and its image offsets count from Base, the load address of
// its mach header. Key names the image for a Cache (its UUID). Table may
// be nil: the table is then built on demand (see Images.BuildWanted).
type Image struct {
	Start, End uint64
	Base       uint64
	Key        string
	Table      *Table
}

// slot is one image of an Images, with its table once built.
type slot struct {
	Image
	table  atomic.Pointer[Table]
	wanted atomic.Bool // a walk needed the table before it was built
	failed atomic.Bool // building it failed: the image is walked by frame pointers
}

// Images is the set of a process's loaded images, sorted for lookup by PC.
// It is built once per change of the image list; walks may run
// concurrently with BuildWanted, which fills in tables that walks asked
// for, so that tables are built lazily but never while a thread is
// stopped.
type Images struct {
	list []slot
}

// NewImages sorts imgs by start. Images with an empty range or a base
// above their start are dropped; overlapping ranges are an error.
func NewImages(imgs []Image) (*Images, error) {
	keep := make([]Image, 0, len(imgs))
	for _, im := range imgs {
		if im.Start < im.End && im.Base <= im.Start {
			keep = append(keep, im)
		}
	}
	slices.SortFunc(keep, func(a, b Image) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	s := &Images{list: make([]slot, len(keep))}
	for i, im := range keep {
		if i > 0 && im.Start < keep[i-1].End {
			return nil, fmt.Errorf("compact: images [%#x, %#x) and [%#x, %#x) overlap", keep[i-1].Start, keep[i-1].End, im.Start, im.End)
		}
		s.list[i].Image = im
		s.list[i].table.Store(im.Table)
	}
	return s, nil
}

// find returns the slot of the image whose code holds pc, or nil.
func (s *Images) find(pc uint64) *slot {
	if s == nil {
		return nil
	}
	lo, hi := 0, len(s.list)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.list[m].Start <= pc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 || pc >= s.list[lo-1].End {
		return nil
	}
	return &s.list[lo-1]
}

// Built returns how many images have their table.
func (s *Images) Built() int {
	if s == nil {
		return 0
	}
	n := 0
	for i := range s.list {
		if s.list[i].table.Load() != nil {
			n++
		}
	}
	return n
}

// BuildWanted builds the tables walks have asked for since the last call,
// with build (typically a Cache lookup around FromMemory). An image whose
// table cannot be built is walked by frame pointers from then on. It
// returns how many tables it built and the first error.
func (s *Images) BuildWanted(build func(Image) (*Table, error)) (int, error) {
	if s == nil {
		return 0, nil
	}
	n := 0
	var first error
	for i := range s.list {
		sl := &s.list[i]
		if !sl.wanted.Load() || sl.table.Load() != nil || sl.failed.Load() {
			continue
		}
		t, err := build(sl.Image)
		if err != nil || t == nil {
			sl.failed.Store(true)
			if first == nil && err != nil && !errors.Is(err, ErrNoUnwindInfo) {
				first = err
			}
			continue
		}
		sl.table.Store(t)
		n++
	}
	return n, first
}

// WalkResult summarises a walk.
type WalkResult struct {
	// Stop is the status of the step that ended the walk: StepEnd for a
	// complete chain, StepDWARF when a frame needs DWARF CFI.
	Stop Status
	// Regs are the registers of the last frame returned, from which
	// another unwinder may continue. At a StepDWARF stop Image is the
	// image whose rule asked for DWARF and Rule that rule (its
	// DWARFOffset is the FDE's offset in the image's __eh_frame); at a
	// StepNoTable stop Image is the image whose table is not built yet
	// (it is marked wanted for Images.BuildWanted).
	Regs  unwind.Regs
	Image *Image
	Rule  Rule
	// CompactFrames and FPFrames count the frames whose caller was sought
	// by a compact rule and by the frame-pointer rule (PCs no table
	// covers).
	CompactFrames, FPFrames int
	// Full says dst had no room for more frames.
	Full bool
}

// fpRule is the rule for code no table covers (JIT code, Go): the frame
// record at FP, as the frame-pointer walker reads it.
var fpRule = Rule{Kind: KindFrame}

// Walk appends the PC and each caller's return address to dst[:0] while
// it has room, using the compact rule of each PC's image and the
// frame-pointer rule where no image covers the PC. Compact rules describe
// a function's body, not its prologue and epilogue; for the innermost
// frame on arm64 those are recognised from LR (see lrIsCaller), on x86_64
// the instruction after "push %rbp" from its offset; a sample on the "ret"
// after "pop %rbp" still misses the caller.
//
// The walk ends at the end of the chain, at a frame that needs DWARF CFI
// or whose image's table is not built yet (see WalkResult), or at a step
// that fails; every step moves SP up, so it always ends. It does not
// allocate.
func (s *Stepper) Walk(images *Images, regs unwind.Regs, dst []uint64) ([]uint64, WalkResult) {
	dst = dst[:0]
	var res WalkResult
	s.prepare()
	pc, sp, fp, lr := s.mask(regs.PC), regs.SP, regs.FP, regs.LR
	var sl *slot   // the image of the previous frame, kept while PCs stay in it
	var tab *Table // sl's table
	for first := true; ; first = false {
		if pc == 0 {
			res.Stop = StepEnd
			break
		}
		if len(dst) == cap(dst) {
			res.Full = true
			break
		}
		dst = append(dst, pc)
		look := pc
		if !first {
			look-- // a return address: the call lies before it
			lr = 0 // and LR is unknown
		}
		if sl == nil || look < sl.Start || look >= sl.End {
			if sl = images.find(look); sl != nil {
				tab = sl.table.Load()
			}
		}
		rule := &fpRule
		var im *Image
		var start, end uint32 // the function's range (image offsets) when rule is from a table
		atStart := false
		if sl != nil {
			im = &sl.Image
			if tab == nil && !sl.failed.Load() {
				sl.wanted.Store(true)
				res.Stop, res.Regs, res.Image = StepNoTable, unwind.Regs{PC: pc, SP: sp, FP: fp, LR: lr}, im
				break
			}
			// A table of another architecture (an arm64 image in a Rosetta
			// process walked as x86_64) does not apply.
			if tab != nil && tab.arch == s.Arch && look-im.Base < 1<<32 {
				if r, st, en, ok := tab.find(uint32(look - im.Base)); ok {
					rule, start, end = r, st, en
					atStart = first && pc-im.Base == uint64(start)
				}
			}
		}
		if first && !atStart && rule.Kind == KindFrame && s.Arch == unwind.ArchARM64 {
			atStart = s.lrIsCaller(fp, lr, rule, im, start, end)
		}
		// x86_64, one byte into an RBP-frame function: only the one-byte
		// "push %rbp" can end there, and "mov %rsp, %rbp" has not run
		// (compact_unwind_encoding.h, UNWIND_X86_64_MODE_RBP_FRAME: RBP is
		// pushed right after the return address).
		pushedRBP := first && rule != &fpRule && rule.Kind == KindFrame && s.Arch == unwind.ArchAMD64 && pc-im.Base == uint64(start)+1
		if rule == &fpRule {
			res.FPFrames++
		} else if rule.Kind == KindFrame || rule.Kind == KindFrameless {
			res.CompactFrames++
		}
		var npc, nsp, nfp uint64
		var st Status
		if pushedRBP {
			npc, nsp, nfp, st = s.afterPushRBP(sp)
		} else {
			npc, nsp, nfp, st = s.step(rule, sp, fp, lr, atStart)
		}
		if st != StepOK {
			res.Stop, res.Regs = st, unwind.Regs{PC: pc, SP: sp, FP: fp, LR: lr}
			if st == StepDWARF {
				res.Image, res.Rule = im, *rule
				res.Rule.Start, res.Rule.End = start, end
			}
			break
		}
		pc, sp, fp = npc, nsp, nfp
	}
	return dst, res
}

// afterPushRBP steps from a function that has pushed RBP and done nothing
// else: the caller's RBP is at SP, the return address above it.
func (s *Stepper) afterPushRBP(sp uint64) (uint64, uint64, uint64, Status) {
	callerFP, ok := s.read(sp)
	if !ok {
		return 0, 0, 0, StepReadFailed
	}
	return s.fromStack(sp, sp+8, callerFP)
}

// lrIsCaller decides, for the innermost frame of a function that keeps a
// frame record (arm64), whether the sample fell in its prologue before the
// record was set up or in its epilogue after it was taken down: then LR
// holds the return address and FP is still the caller's. It is so when LR
// is set, does not point into the function itself (which it does after the
// function has made a call of its own), and differs from the return
// address in the record at FP. The same test without the range check is
// the frame-pointer walker's (unwind.Walker).
func (s *Stepper) lrIsCaller(fp, lr uint64, rule *Rule, im *Image, start, end uint32) bool {
	lr = s.mask(lr)
	if lr == 0 {
		return false
	}
	if rule != &fpRule && im != nil {
		if at := lr - 1 - im.Base; lr-1 >= im.Base && at >= uint64(start) && at < uint64(end) {
			return false
		}
	}
	ret, ok := s.read(fp + 8)
	return !ok || s.mask(ret) != lr
}

// WalkWithFallback walks with compact rules as Walk does and, where that
// walk stops before the end of the chain (a frame needing DWARF CFI, an
// image whose table is not built yet, a failed step), continues from the
// frame it stopped at with the frame-pointer walker fp, over the same
// stack. The result is what fp.Walk would report for the whole walk: its
// Stop and counters for the part it walked, and the hash of all the PCs
// returned. With no images it is fp.Walk. It does not allocate.
func (s *Stepper) WalkWithFallback(images *Images, fp *unwind.Walker, regs unwind.Regs, stack *unwind.Stack, dst []uint64) ([]uint64, unwind.Result, WalkResult) {
	s.Stack = *stack
	pcs, res := s.Walk(images, regs, dst)
	switch {
	case res.Stop == StepEnd:
		return pcs, unwind.Result{Stop: unwind.StopEnd, Hash: unwind.HashPCs(pcs)}, res
	case res.Full:
		return pcs, unwind.Result{Stop: unwind.StopNoRoom, Hash: unwind.HashPCs(pcs)}, res
	case len(pcs) == 0:
		out, r := fp.Walk(regs, stack, dst)
		return out, r, res
	}
	// fp rewrites the last frame's PC and appends its callers after it.
	n := len(pcs) - 1
	out, r := fp.Walk(res.Regs, stack, pcs[n:n])
	pcs = pcs[:n+len(out)]
	r.Hash = unwind.HashPCs(pcs)
	return pcs, r, res
}
