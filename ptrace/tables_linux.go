//go:build linux && (amd64 || arm64)

package ptrace

import (
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
var cfiTables = cfi.NewCache(cfi.CacheOptions{})

// targetTables is a target's resolver, swapped whole when its images
// change; walks (one goroutine at a time: hotMu, or the tracer thread) use
// the one they find.
type targetTables struct {
	res atomic.Pointer[cfi.Resolver]
	// sample, while a kernel sample is walked, is the resolver of the
	// images its process had when it was taken (nil: res).
	sample *cfi.Resolver
	// lastMiss is when a walk last re-read the memory map for a PC in no
	// known object (walks only).
	lastMiss time.Time
}

// missGap bounds how often walks re-read the memory map for PCs in no
// known object: code loaded since the last read (dlopen), or code with no
// file (JIT), for which the map is then read at most this often.
const missGap = 200 * time.Millisecond

// update rebuilds the resolver from a new image set.
func (tt *targetTables) update(set *images.Set) { tt.res.Store(tablesResolver(set)) }

// tablesResolver returns a resolver of set's objects to their unwind
// tables. Tables are read through /proc/PID/map_files where the profiler
// may follow it to the image's file (the file the target maps, whatever it
// has put at the path since), else at the path.
func tablesResolver(set *images.Set) *cfi.Resolver {
	var objs []cfi.Object
	for _, im := range set.Images() {
		o := cfi.Object{Start: im.Start, Limit: im.Limit, Offset: im.Offset}
		if im.Format == images.FormatELF && im.Memory == nil && im.Path != "" && im.Path[0] == '/' {
			o.Key, o.Path = im.Key(), im.File()
			if mapsFile(im) {
				o.Path = im.MapFile
			}
		}
		// Else [vdso] and the like: no file to read, so no table (its
		// frames are walked through frame records), but known, so that
		// its PCs do not make walks re-read the memory map.
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
// bounded time, the second at most every missGap.
func (t *Target) walk(w *unwind.Walker, regs unwind.Regs, st *unwind.Stack, dst []uint64, stopped bool) ([]uint64, unwind.Result) {
	if !t.plan().tables {
		return w.Walk(regs, st, dst)
	}
	r := t.resolver()
	if r != nil && !stopped && t.tables.sample == nil && !r.Covers(regs.PC) && time.Since(t.tables.lastMiss) >= missGap {
		// Perhaps loaded since the map was read (the sampler reads it
		// about once a second). Not while a thread is held stopped:
		// reading the map and build IDs may take milliseconds.
		t.tables.lastMiss = time.Now()
		t.Images()
		r = t.tables.res.Load()
	}
	switch {
	case r == nil:
		return w.Walk(regs, st, dst)
	case stopped:
		return w.WalkCFI(regs, st, r.NoWait(), dst)
	}
	return w.WalkCFI(regs, st, r, dst)
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
