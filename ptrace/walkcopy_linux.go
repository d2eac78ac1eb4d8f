//go:build linux && (amd64 || arm64)

package ptrace

import (
	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
)

// WalkCopies walks each capture of CaptureAll again from its copy (its
// registers and stack bytes), with the unwind tables of the objects the
// walk meets, built now and waited for. A snapshot calls it once the
// threads run again, so that they are stopped only for the copy and only
// the tables its PCs need are built (the walk during the stop does not
// wait for a table). Frames beyond the copy are read from the running
// process, as during the stop. A capture with an error or no copy keeps
// the walk it has.
func (t *Target) WalkCopies(caps []target.Capture) {
	if !t.plan().tables {
		return // the walk during the stop was this one
	}
	r := t.tables.res.Load()
	if r == nil {
		return
	}
	// The stacks are where the capture found them: its memory map
	// serves, unless a stack is in none of its mappings.
	var regions images.Regions
	if p := t.persist; p != nil {
		if r := p.captured.Load(); r != nil {
			regions = *r
		}
	}
	reread := false
	w, err := newWalker(t.opts, &memReader{pid: t.pid})
	if err != nil {
		return
	}
	// The walks' frames are packed one after the other (slab), as
	// CaptureAll packs them.
	var frames slab[uint64]
	for i := range caps {
		c := &caps[i]
		if c.Err != nil || len(c.Stack) == 0 {
			continue
		}
		lo, hi, ok := regions.StackBounds(c.Regs.SP)
		if !ok && !reread {
			reread = true
			if r, err := readRegions(t.pid); err == nil {
				regions = r
				lo, hi, ok = regions.StackBounds(c.Regs.SP)
			}
		}
		if !ok {
			continue
		}
		st := unwind.Stack{Base: c.StackBase, Data: c.Stack, Lo: lo, Hi: hi}
		pcs, walk := w.WalkCFI(c.Regs, &st, r, frames.next(t.opts.MaxFrames, len(caps)-i))
		c.PCs, c.Walk = frames.keep(pcs), walk
	}
}
