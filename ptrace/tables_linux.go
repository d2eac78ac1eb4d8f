//go:build linux && (amd64 || arm64)

package ptrace

import (
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/target"
	"github.com/macprof/macprof/unwind"
	"github.com/macprof/macprof/unwind/cfi"
)

// Unwind tables (target.Options.Unwind auto or cfi): each object's DWARF
// CFI is compiled once, on the first walk that meets its code, into a
// table shared by every target (keyed by build ID), and the walks of a
// target find them through a resolver of its executable mappings, rebuilt
// when its memory map changes.

// cfiTables is the process-wide cache of unwind tables.
var cfiTables = cfi.NewCache(cfi.CacheOptions{Load: loadTable})

// targetTables is a target's resolver, swapped whole when its images
// change; walks (one goroutine at a time: hotMu, or the tracer thread) use
// the one they find.
type targetTables struct {
	res atomic.Pointer[cfi.Resolver]
	// sample, while a kernel sample is walked, is the resolver of the
	// images its process had when it was taken (nil: res).
	sample *cfi.Resolver
	// sampleNow tells that sample is the images of the program running
	// now, which a re-read of the memory map extends (code loaded since
	// it was read), not an earlier program's.
	sampleNow bool
	// lastMiss is when a walk last re-read the memory map for a PC in no
	// known object (walks only).
	lastMiss time.Time
	// rewalk holds stopCaptureAndWalk's second walk.
	rewalk []uint64
	// copyWalker walks that second walk where no kernel sampler's walker
	// is (stop captures only): within the copy, reading no memory.
	copyWalker *unwind.Walker
	// missFound tells that that re-read found code the resolver did not
	// know: the process is still loading code (a command's libraries at
	// its start, dlopens one after another), so the next miss re-reads
	// at once rather than after missGap.
	missFound bool
	// vdso: the resolver has the vDSO's table (vdsoTableUse).
	vdso bool
}

// missGap bounds how often walks re-read the memory map for PCs in no
// known object: code loaded since the last read (dlopen), or code with no
// file (JIT), for which the map is then read at most this often.
const missGap = 200 * time.Millisecond

// update rebuilds the resolver from a new image set.
func (tt *targetTables) update(set *images.Set) { tt.res.Store(resolverOf(set, tt.vdso)) }

// vdsoTableUse tells whether a target's walks take the vDSO's unwind
// table: with --unwind cfi, which has no frame records to fall back on.
// With auto they follow the vDSO's frame records, as the kernel's
// callchains do, and the chain checks take those on trust: its hottest
// code is a leaf without a frame record, so a check that knew its table
// would cut every callchain through it, and the stack copies that would
// then be walked cannot take a Go program (which calls the vDSO on its
// system stack) past its stack switch. The chain through the leaf misses
// only the vDSO function that called it. A walk of a stack copy still
// takes the interrupted frame's rule from the table (cfi.Object.LeafOnly),
// as a leaf or an epilogue there has no frame record of its own.
func vdsoTableUse(p walkPlan) bool { return p.tablesOnly }

// tablesResolver returns a resolver of set's objects to their unwind
// tables, the vDSO's left out (resolverOf).
func tablesResolver(set *images.Set) *cfi.Resolver { return resolverOf(set, false) }

// resolverOf returns a resolver of set's objects to their unwind tables,
// with the vDSO's (read from the profiler's copy) where vdso is set, and
// else with it for the interrupted frame alone (LeafOnly).
// Tables are read through /proc/PID/map_files where the profiler may
// follow it to the image's file (the file the target maps, whatever it has
// put at the path since), else at the path.
func resolverOf(set *images.Set, vdso bool) *cfi.Resolver {
	var objs []cfi.Object
	for _, im := range set.Images() {
		o := cfi.Object{Start: im.Start, Limit: im.Limit, Offset: im.Offset}
		switch {
		case im.Format == images.FormatELF && im.Memory == nil && im.Path != "" && im.Path[0] == '/':
			o.Key, o.Path = im.Key(), im.File()
			if mapsFile(im) {
				o.Path = im.MapFile
			}
		case sameVDSO(im):
			o.Key, o.Path, o.LeafOnly = vdsoTableKey, vdsoTablePath, !vdso
		}
		// Else the vDSO left out, another ABI's and the like: no table
		// (its frames are walked through frame records), but known, so
		// that its PCs do not make walks re-read the memory map.
		objs = append(objs, o)
	}
	return cfi.NewResolver(cfiTables, objs)
}

// mapsFile reports whether im's MapFile can be followed and leads to the
// file it maps (by device and inode: the range may map another file since,
// after an exec).
func mapsFile(im *images.Image) bool {
	if im.MapFile == "" || im.Inode == 0 {
		return false
	}
	var st unix.Stat_t
	return unix.Stat(im.MapFile, &st) == nil && uint64(st.Dev) == im.Dev && st.Ino == im.Inode
}

// walk walks a captured stack by the target's unwind method. stopped
// tells that the thread is held stopped for the walk: a table not built
// yet is then not waited for (the walk follows frame records meanwhile),
// nor is the memory map re-read for a PC in no known object; a kernel
// sample's walk does both, the first at most once per object for a
// bounded time, the second as rereadForMiss allows, walking again with
// what it found.
func (t *Target) walk(w *unwind.Walker, regs unwind.Regs, st *unwind.Stack, dst []uint64, stopped bool) ([]uint64, unwind.Result) {
	if !t.plan().tables {
		return w.Walk(regs, st, dst)
	}
	r := t.resolver()
	switch {
	case r == nil:
		return w.Walk(regs, st, dst)
	case stopped:
		// Not while a thread is held stopped: reading the map and
		// build IDs may take milliseconds.
		return w.WalkCFI(regs, st, r.NoWait(), dst)
	}
	if !r.Covers(regs.PC) {
		r = t.rereadForMiss(r)
	}
	out, res := w.WalkCFI(regs, st, r, dst)
	if n := len(out); n > 1 && !r.Covers(out[n-1]) {
		// The walk ended in code the resolver does not know: a caller
		// in a library loaded since the map was read.
		if again := t.rereadForMiss(r); again != r {
			r = again
			out, res = w.WalkCFI(regs, st, r, dst)
		}
	}
	return out, res
}

// stopCaptureAndWalk captures th by a stop, as every capture of a target
// sampled by stops is, and a thread of a kernel-sampled target before its
// ring opens or while it idles, and walks the copy again once th runs
// unless the walk made while th was held stopped went to its end by unwind
// tables: that walk waited for no table (a frame record chain may end
// early, or seem to end, where one was missing), and a thread's first
// capture often comes before its libraries' tables are built (a command's
// first milliseconds, a process just attached), which cut the stack of a
// capture that weighs all the CPU time th used so far. The second walk waits for the tables and re-reads the
// memory map as a kernel sample's does, within the copy alone.
func (t *Target) stopCaptureAndWalk(th *thread, c *target.Capture) error {
	err := t.stopAndCapture(th, c)
	if err != nil || len(c.Stack) == 0 || !t.plan().tables {
		return err
	}
	if w := c.Walk; !w.Stop.Truncated() && len(c.PCs) > 1 && w.CFIFrames >= len(c.PCs)-1 {
		return nil // walked to its end by the tables
	}
	st := unwind.Stack{Base: c.StackBase, Data: c.Stack, Lo: c.StackBase, Hi: c.StackBase + uint64(len(c.Stack))}
	tt := &t.tables
	w := tt.copyWalker
	if t.kernel != nil {
		w = t.kernel.walker
	} else if w == nil {
		var err error
		if w, err = newWalker(t.opts, nil); err != nil {
			return nil // the first walk stands
		}
		tt.copyWalker = w
	}
	tt.rewalk = slices.Grow(tt.rewalk[:0], max(t.opts.MaxFrames, 1))
	pcs, res := t.walk(w, c.Regs, &st, tt.rewalk[:0:max(t.opts.MaxFrames, 1)], false)
	if !res.Stop.Truncated() || len(pcs) > len(c.PCs) {
		c.PCs, c.Walk = append(c.PCs[:0], pcs...), res
	}
	return nil
}

// rereadForMiss re-reads the memory map for a walk that met a PC in no
// object r knows (perhaps loaded since the map was read: the sampler reads
// it about once a second) and returns the resolver to walk with: r when
// nothing new was found or the read is not due. A kernel sample of an
// earlier program is not re-read for: its map is gone. Re-reads come at
// most every missGap, unless the last one found new code (JIT code, in no
// file, would otherwise have the map read at every miss).
func (t *Target) rereadForMiss(r *cfi.Resolver) *cfi.Resolver {
	tt := &t.tables
	if tt.sample != nil && !tt.sampleNow {
		return r
	}
	if now := tt.res.Load(); now != nil && now != r {
		// Read since r was taken (by the sampler, or for an earlier
		// miss).
		if tt.sample != nil {
			tt.sample = now
		}
		return now
	}
	if !tt.missFound && time.Since(tt.lastMiss) < missGap {
		return r
	}
	tt.lastMiss = time.Now()
	before := tt.res.Load()
	t.Images()
	now := tt.res.Load()
	tt.missFound = now != before
	if now == nil || now == r {
		return r
	}
	if tt.sample != nil {
		tt.sample = now
	}
	return now
}

// resolver returns the unwind tables' resolver for the walk or chain
// check at hand: the images of a kernel sample's program, else the
// target's.
func (t *Target) resolver() *cfi.Resolver {
	if r := t.tables.sample; r != nil {
		return r
	}
	return t.tables.res.Load()
}

// PrepareUnwind builds the unwind tables of every object t has mapped,
// waiting for them (target.UnwindPreparer): a stop's walk does not wait
// for a table, so a snapshot would otherwise walk by frame pointers alone.
func (t *Target) PrepareUnwind() {
	if !t.plan().tables {
		return
	}
	if t.tables.res.Load() == nil {
		t.Images()
	}
	if r := t.tables.res.Load(); r != nil {
		r.Warm()
	}
}

// newWalker returns a walker for the target's options.
func newWalker(opts target.Options, fallback unwind.MemoryReader) (*unwind.Walker, error) {
	return unwind.NewWalker(unwind.Config{Arch: nativeArch, MaxFrames: opts.MaxFrames, Fallback: fallback, TablesOnly: walkPlanOf(opts.Unwind).tablesOnly})
}
