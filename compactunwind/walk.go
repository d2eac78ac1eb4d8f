package compactunwind

import (
	"fmt"
	"slices"

	"github.com/macprof/macprof/unwind"
)

// Image places one image's table in a process: its code lies in
// [Start, End) and its image offsets count from Base, the load address of
// its mach header.
type Image struct {
	Start, End uint64
	Base       uint64
	Table      *Table
}

// Images is a read-only set of loaded images, sorted for lookup by PC. It
// is built once per change of the process's image list and shared by
// walks.
type Images struct {
	list []Image
}

// NewImages sorts imgs by start. Images with an empty range or no table
// are dropped; overlapping ranges are an error.
func NewImages(imgs []Image) (*Images, error) {
	list := make([]Image, 0, len(imgs))
	for _, im := range imgs {
		if im.Table != nil && im.Start < im.End && im.Base <= im.Start {
			list = append(list, im)
		}
	}
	slices.SortFunc(list, func(a, b Image) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	for i := 1; i < len(list); i++ {
		if list[i].Start < list[i-1].End {
			return nil, fmt.Errorf("compactunwind: images [%#x, %#x) and [%#x, %#x) overlap", list[i-1].Start, list[i-1].End, list[i].Start, list[i].End)
		}
	}
	return &Images{list: list}, nil
}

// find returns the image whose code holds pc, or nil.
func (s *Images) find(pc uint64) *Image {
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

// WalkResult summarises a walk.
type WalkResult struct {
	// Stop is the status of the step that ended the walk: StepEnd for a
	// complete chain, StepDWARF when a frame needs DWARF CFI.
	Stop Status
	// At a StepDWARF stop, Regs are the registers of the last frame
	// returned, Image the image whose rule asked for DWARF, and Rule that
	// rule (its DWARFOffset is the FDE's offset in the image's
	// __eh_frame): a CFI unwinder continues from there.
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
// frame on arm64 those are recognised from LR (see lrIsCaller). On x86_64
// a sample on the one instruction between "push %rbp" and
// "mov %rsp, %rbp", or on the "ret" after "pop %rbp", misses the caller. It ends at the end of
// the chain, at a frame that needs DWARF CFI (see WalkResult), or at a
// step that fails; every step moves SP up, so it always ends. It does not
// allocate.
func (s *Stepper) Walk(images *Images, regs unwind.Regs, dst []uint64) ([]uint64, WalkResult) {
	dst = dst[:0]
	var res WalkResult
	regs.PC = s.mask(regs.PC)
	for first := true; ; first = false {
		if regs.PC == 0 {
			res.Stop = StepEnd
			break
		}
		if len(dst) == cap(dst) {
			res.Full = true
			break
		}
		dst = append(dst, regs.PC)
		pc := regs.PC
		if !first {
			pc-- // a return address: the call lies before it
		}
		rule, im := &fpRule, images.find(pc)
		atStart := false
		var r Rule
		if im != nil && pc-im.Base < 1<<32 {
			if found, ok := im.Table.Lookup(uint32(pc - im.Base)); ok {
				r, rule = found, &r
				atStart = first && regs.PC-im.Base == uint64(r.Start)
			}
		}
		if first && !atStart && rule.Kind == KindFrame && s.Arch == unwind.ArchARM64 {
			atStart = s.lrIsCaller(regs, rule, im)
		}
		if rule == &fpRule {
			res.FPFrames++
		} else if rule.Kind == KindFrame || rule.Kind == KindFrameless {
			res.CompactFrames++
		}
		out, st := s.Step(rule, regs, atStart)
		if st != StepOK {
			res.Stop, res.Regs = st, regs
			if st == StepDWARF {
				res.Image, res.Rule = im, *rule
			}
			break
		}
		regs = out
	}
	return dst, res
}

// lrIsCaller decides, for the innermost frame of a function that keeps a
// frame record (arm64), whether the sample fell in its prologue before the
// record was set up or in its epilogue after it was taken down: then LR
// holds the return address and FP is still the caller's. It is so when LR
// is set, does not point into the function itself (which it does after the
// function has made a call of its own), and differs from the return
// address in the record at FP. The same test without the range check is
// the frame-pointer walker's (unwind.Walker).
func (s *Stepper) lrIsCaller(regs unwind.Regs, rule *Rule, im *Image) bool {
	lr := s.mask(regs.LR)
	if lr == 0 {
		return false
	}
	if rule != &fpRule && im != nil {
		if at := lr - 1 - im.Base; lr-1 >= im.Base && at >= uint64(rule.Start) && at < uint64(rule.End) {
			return false
		}
	}
	ret, ok := s.read(regs.FP + 8)
	return !ok || s.mask(ret) != lr
}
