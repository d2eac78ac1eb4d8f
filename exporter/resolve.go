package exporter

import (
	"fmt"
	"strconv"

	"github.com/macprof/macprof/profile"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/symcache"
	"github.com/macprof/macprof/unwind"
)

// AfterSampleFrame is the function name of the pseudo frame between a
// stack's frames found in the sample's stack copy and its callers, read
// from the process after the sample (unwind.AfterSampleMark).
const AfterSampleFrame = "[read after sample]"

// location is one unique code address of one process, symbolized.
type location struct {
	proc int           // index into Window.Processes, -1 when the PID is unknown
	img  *images.Image // nil for an address outside every known image
	// addr is the instruction address: the PC for a stack's first entry,
	// the return address minus one for the others (as the Go runtime
	// records CPU profiles, so that a call site names its own line).
	addr uint64
	// frames are the symbolized frames, innermost (inlined) first; empty
	// when img is nil.
	frames []symcache.Frame
}

// symbolized reports whether the location names a function: by its name,
// or by its start when it has none (see symcache.Frame.Named).
func (l *location) symbolized() bool {
	return len(l.frames) > 0 && l.frames[0].Named()
}

// names appends the location's frame names to dst outermost first (the
// caller into which the others were inlined comes first).
func (l *location) names(dst []string) []string {
	if l.img == nil && len(l.frames) > 0 {
		return append(dst, l.frames[0].Function) // a pseudo frame: [system]
	}
	if l.img == nil {
		return append(dst, "0x"+strconv.FormatUint(l.addr, 16))
	}
	for i := len(l.frames) - 1; i >= 0; i-- {
		dst = append(dst, l.frames[i].Name())
	}
	return dst
}

// locKey identifies a location: within one process an address determines
// its image.
type locKey struct {
	proc int
	addr uint64
}

type stackKey struct {
	stack, proc int
}

// resolver symbolizes a window: every unique (process, image, address) once
// per export, and every unique (stack, process) once.
type resolver struct {
	w      *profile.Window
	cache  *symcache.Cache
	procs  map[int]int    // PID -> index into w.Processes (Gen 0)
	gens   map[[2]int]int // (PID, Gen) -> index into w.Processes
	locs   []location
	byKey  map[locKey]int
	stacks map[stackKey][]int
	ids    []int // backing array for stacks' location lists
	// app, when set, collapses frames outside the application's images
	// into the location system (added on first use, -1 until then).
	app    *AppFilter
	system int
	// after is the location of the AfterSampleFrame pseudo frame, -1
	// until used.
	after int
}

func newResolver(w *profile.Window, c *symcache.Cache, app *AppFilter) (*resolver, error) {
	if w == nil {
		return nil, fmt.Errorf("exporter: nil window")
	}
	if c == nil {
		return nil, fmt.Errorf("exporter: nil symbol cache")
	}
	if err := w.CheckValid(); err != nil {
		return nil, err
	}
	r := &resolver{
		w:      w,
		cache:  c,
		procs:  make(map[int]int, len(w.Processes)),
		byKey:  make(map[locKey]int),
		stacks: make(map[stackKey][]int, len(w.Stacks)),
		app:    app,
		system: -1,
		after:  -1,
	}
	for i, p := range w.Processes {
		if p.Gen != 0 {
			if r.gens == nil {
				r.gens = map[[2]int]int{}
			}
			r.gens[[2]int{p.PID, p.Gen}] = i
			continue
		}
		if _, dup := r.procs[p.PID]; !dup {
			r.procs[p.PID] = i
		}
	}
	return r, nil
}

// proc returns the index of the process with the given PID, or -1.
func (r *resolver) proc(pid int) int {
	if i, ok := r.procs[pid]; ok {
		return i
	}
	return -1
}

// procOf returns the index of the process whose images s was taken under:
// its PID's with its Gen, else its PID's; -1 when there is none.
func (r *resolver) procOf(s profile.Sample) int {
	if s.Gen != 0 {
		if i, ok := r.gens[[2]int{s.PID, s.Gen}]; ok {
			return i
		}
	}
	if i := r.proc(s.PID); i >= 0 {
		return i
	}
	for i, p := range r.w.Processes {
		if p.PID == s.PID {
			return i
		}
	}
	return -1
}

// stack returns the location indices of a sample's stack, innermost first.
// The returned slice is shared and must not be modified. The error is
// always nil (newResolver checked the window); the result stays because
// TestResolverOncePerAddress calls stack with two results.
func (r *resolver) stack(s profile.Sample) ([]int, error) {
	proc := r.procOf(s)
	key := stackKey{s.Stack, proc}
	if ids, ok := r.stacks[key]; ok {
		return ids, nil
	}
	var set *images.Set
	if proc >= 0 {
		set = r.w.Processes[proc].Images
	}
	pcs := r.w.Stacks[s.Stack].PCs
	if cap(r.ids)-len(r.ids) < len(pcs) {
		r.ids = make([]int, 0, max(len(pcs), 1<<14))
	}
	start := len(r.ids)
	for i, pc := range pcs {
		r.ids = append(r.ids, r.location(proc, set, pc, i > 0))
	}
	ids := r.ids[start:len(r.ids):len(r.ids)]
	if r.app != nil {
		ids = r.appOnly(proc, ids)
	}
	r.stacks[key] = ids
	return ids, nil
}

// appOnly collapses the locations of ids outside the application's
// images into the [system] location.
func (r *resolver) appOnly(proc int, ids []int) []int {
	if r.system < 0 {
		r.system = len(r.locs)
		r.locs = append(r.locs, location{proc: -1, frames: []symcache.Frame{{Function: SystemFrame}}})
	}
	exe := executable(r.w, proc)
	return Collapse(ids, func(id int) bool { return id == r.after || id != r.system && r.app.IsApp(exe, r.locs[id].img) }, r.system)
}

// location returns the index of the location of pc in process proc,
// symbolizing it on first sight.
func (r *resolver) location(proc int, set *images.Set, pc uint64, caller bool) int {
	if pc == unwind.AfterSampleMark && caller {
		return r.afterSample()
	}
	addr := pc
	if caller && addr > 0 {
		addr--
	}
	key := locKey{proc: proc, addr: addr}
	if id, ok := r.byKey[key]; ok {
		return id
	}
	loc := location{proc: proc, img: set.Lookup(addr), addr: addr}
	if loc.img != nil {
		// addr is already adjusted for a return address: symbolize it as
		// an instruction address.
		loc.frames = r.cache.Symbolize(loc.img, addr, false)
	}
	id := len(r.locs)
	r.locs = append(r.locs, loc)
	r.byKey[key] = id
	return id
}

// afterSample returns the index of the AfterSampleFrame pseudo location,
// added on first use; app-only profiles keep it.
func (r *resolver) afterSample() int {
	if r.after < 0 {
		r.after = len(r.locs)
		r.locs = append(r.locs, location{proc: -1, frames: []symcache.Frame{{Function: AfterSampleFrame}}})
	}
	return r.after
}
