package exporter

import (
	"fmt"
	"sort"
	"strings"

	"github.com/macprof/macprof/profile"
	"github.com/macprof/macprof/target"

	pprof "github.com/google/pprof/profile"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/symcache"
)

// Label keys written on every pprof sample.
const (
	// LabelThread is the string label holding the thread's name (omitted
	// when the thread has none).
	LabelThread = "thread"
	// LabelUnwind is the string label set to "cfi" on samples whose stack
	// was walked with unwind tables (DWARF CFI) rather than frame pointers
	// alone.
	LabelUnwind = "unwind"
	// LabelThreadID is the numeric label holding the thread id (omitted
	// on the CPU time of threads gone before listed, which have none).
	LabelThreadID = "thread_id"
	// LabelPID is the numeric label holding the process id.
	LabelPID = "pid"
)

// TruncatedFrame is the function name of the pseudo frame placed at the root
// of stacks whose walk ended early, so that they are not mistaken for
// complete stacks (their outermost frames are missing).
const TruncatedFrame = "[truncated]"

// NoFramesFrame is the function name of the pseudo frame that stands for a
// stack with no addresses at all (the walk failed at the first frame), so
// that its samples still count in every format.
const NoFramesFrame = "[no frames]"

// GoneThreadsName names, where a thread's name is shown (timelines, a
// thread root frame), thread 0 of a window: the CPU time of threads that
// started and ended between two listings, which no thread id stands for.
const GoneThreadsName = "[threads gone before listed]"

// Profile builds the pprof profile of a window, symbolizing each unique
// address once through c. It follows the Go runtime's CPU profiles: sample
// types samples/count and cpu/nanoseconds, period type cpu/nanoseconds and
// period w.Period. In wall-clock mode the second sample type and the period
// type are wall/nanoseconds instead, because those samples include threads
// that were not running.
//
// Each process gets its own mappings (one per image a sample touches, the
// main executable first); each sample has labels thread (name), thread_id
// (none on thread 0, GoneThreadsName) and pid (samples of one thread share
// their label maps: do not modify them). Addresses outside every known image become locations without a
// mapping or function. Missed-sample counts are written as comments.
func Profile(w *profile.Window, c *symcache.Cache, opts Options) (*pprof.Profile, error) {
	r, err := newResolver(w, c, opts.AppOnly)
	if err != nil {
		return nil, err
	}
	period := w.Period.Nanoseconds()
	if period <= 0 {
		return nil, fmt.Errorf("exporter: window period %v is not positive", w.Period)
	}
	kind := "cpu"
	if w.Mode == profile.ModeWall {
		kind = "wall"
	}
	p := &pprof.Profile{
		SampleType: []*pprof.ValueType{
			{Type: "samples", Unit: "count"},
			{Type: kind, Unit: "nanoseconds"},
		},
		PeriodType: &pprof.ValueType{Type: kind, Unit: "nanoseconds"},
		Period:     period,
	}
	if !w.Start.IsZero() {
		p.TimeNanos = w.Start.UnixNano()
		if w.End.After(w.Start) {
			p.DurationNanos = w.End.Sub(w.Start).Nanoseconds()
		}
	}
	p.Comments = comments(w)

	b := pprofBuilder{
		p:         p,
		r:         r,
		mappings:  make(map[mapKey]*pprof.Mapping),
		functions: make(map[funcKey]*pprof.Function),
	}
	// Resolve every stack first so that mappings can be ordered.
	samples := make([][]int, len(w.Samples))
	for i, s := range w.Samples {
		if s.Count <= 0 {
			continue
		}
		if samples[i], err = r.stack(s); err != nil {
			return nil, err
		}
	}
	b.addMappings()
	// Locations and their lines are allocated in two arrays.
	nlines := 0
	for i := range r.locs {
		nlines += len(r.locs[i].frames)
	}
	b.lines = make([]pprof.Line, 0, nlines)
	locArray := make([]pprof.Location, len(r.locs))
	locs := make([]*pprof.Location, len(r.locs))
	p.Location = make([]*pprof.Location, 0, len(r.locs)+len(w.Processes)+1)
	for i := range r.locs {
		locs[i] = b.location(&r.locs[i], &locArray[i])
	}
	b.addSamples(samples, locs, period)
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("exporter: built an invalid profile: %w", err)
	}
	return p, nil
}

// addSamples adds one pprof sample per window sample with a positive
// count. Values, location lists and samples share a few large allocations;
// samples of one thread share their label maps.
func (b *pprofBuilder) addSamples(samples [][]int, locs []*pprof.Location, period int64) {
	w := b.r.w
	nlocs, n := 0, 0
	for i, s := range w.Samples {
		if s.Count > 0 {
			nlocs += len(samples[i]) + 2
			n++
		}
	}
	locBacking := make([]*pprof.Location, 0, nlocs)
	values := make([]int64, 0, 2*n)
	type threadKey struct {
		pid    int
		thread target.ThreadID
		name   string
		cfi    bool
	}
	type labels struct {
		str map[string][]string
		num map[string][]int64
	}
	threads := make(map[threadKey]labels)
	var truncated, empty, unsampled *pprof.Location
	var lost [profile.NumLostReasons]*pprof.Location
	b.p.Sample = make([]*pprof.Sample, 0, n)
	sampleArray := make([]pprof.Sample, 0, n)
	for i, s := range w.Samples {
		if s.Count <= 0 {
			continue
		}
		start := len(locBacking)
		for _, id := range samples[i] {
			locBacking = append(locBacking, locs[id])
		}
		if w.Stacks[s.Stack].Truncated {
			if truncated == nil {
				truncated = b.pseudoLocation(TruncatedFrame)
			}
			locBacking = append(locBacking, truncated)
		}
		if w.Stacks[s.Stack].Unsampled {
			if unsampled == nil {
				unsampled = b.pseudoLocation(profile.UnsampledFrame)
			}
			locBacking = append(locBacking, unsampled)
		} else if r := w.Stacks[s.Stack].Lost; r != profile.NotLost && r < profile.NumLostReasons {
			if lost[r] == nil {
				lost[r] = b.pseudoLocation(r.Frame())
			}
			locBacking = append(locBacking, lost[r])
		} else if len(samples[i]) == 0 {
			if empty == nil {
				empty = b.pseudoLocation(NoFramesFrame)
			}
			locBacking = append(locBacking, empty)
		}
		tk := threadKey{s.PID, s.Thread, s.ThreadName, w.Stacks[s.Stack].CFI}
		lb, ok := threads[tk]
		if !ok {
			lb.num = map[string][]int64{LabelPID: {int64(s.PID)}}
			if s.Thread != 0 {
				lb.num[LabelThreadID] = []int64{int64(s.Thread)}
			}
			if s.ThreadName != "" {
				lb.str = map[string][]string{LabelThread: {printable(s.ThreadName)}}
			}
			if tk.cfi {
				if lb.str == nil {
					lb.str = map[string][]string{}
				}
				lb.str[LabelUnwind] = []string{"cfi"}
			}
			threads[tk] = lb
		}
		values = append(values, s.Count, s.Count*period)
		sampleArray = append(sampleArray, pprof.Sample{
			Location: locBacking[start:len(locBacking):len(locBacking)],
			Value:    values[len(values)-2 : len(values) : len(values)],
			Label:    lb.str,
			NumLabel: lb.num,
		})
		b.p.Sample = append(b.p.Sample, &sampleArray[len(sampleArray)-1])
	}
}

// comments describes what the samples do not show: missed samples by
// reason, in a stable order.
func comments(w *profile.Window) []string {
	var out []string
	for _, k := range w.MissReasons() {
		out = append(out, fmt.Sprintf("macprof: missed %s: %d", k, w.Missed[k]))
	}
	if w.Stats.Ticks > 0 {
		out = append(out, fmt.Sprintf("macprof: mode %s, %d captures; the sampler woke %d times (%d wake-ups late)", w.Mode, w.Stats.Captures, w.Stats.Ticks, w.Stats.MissedTicks))
	}
	return out
}

type mapKey struct {
	proc int
	img  *images.Image
}

type funcKey struct {
	name, file string
}

type pprofBuilder struct {
	p         *pprof.Profile
	r         *resolver
	mappings  map[mapKey]*pprof.Mapping
	functions map[funcKey]*pprof.Function
	lines     []pprof.Line // backing array of all locations' lines
}

// addMappings creates one mapping per (process, image) that a location
// uses, process by process in window order, each process's main executable
// first (pprof takes the first mapping as the main binary), then by address.
//
// A mapping's has_functions, has_filenames, has_line_numbers and
// has_inline_frames say what symbolization found in the image: each is
// set when any of the mapping's locations has a named function, a file, a
// line, or inlined frames. (Requiring every location would let one address
// in padding between functions, or in a function without debug
// information, switch a flag off, so that pprof would try to symbolize the
// whole mapping again.) The flags are consistent: any of the others
// implies has_functions, since file, line and inlined frames come only
// with a function.
func (b *pprofBuilder) addMappings() {
	type use struct {
		key       mapKey
		functions bool // some location in it is symbolized
		files     bool // some frame has a file
		lines     bool // some frame has a line
		inlined   bool // some location has inlined frames
	}
	uses := make(map[mapKey]*use)
	var order []*use
	for i := range b.r.locs {
		l := &b.r.locs[i]
		if l.img == nil {
			continue
		}
		k := mapKey{l.proc, l.img}
		u := uses[k]
		if u == nil {
			u = &use{key: k}
			uses[k] = u
			order = append(order, u)
		}
		if !l.symbolized() {
			continue
		}
		u.functions = true
		for _, f := range l.frames {
			if f.File != "" {
				u.files = true
			}
			if f.Line > 0 {
				u.lines = true
			}
		}
		if len(l.frames) > 1 {
			u.inlined = true
		}
	}
	procs := b.r.w.Processes
	isMain := func(k mapKey) bool {
		return k.proc >= 0 && procs[k.proc].Executable != "" && k.img.Path == procs[k.proc].Executable
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, c := order[i].key, order[j].key
		if a.proc != c.proc {
			// Unknown processes (-1) last.
			if a.proc < 0 || c.proc < 0 {
				return a.proc >= 0
			}
			return a.proc < c.proc
		}
		if ma, mc := isMain(a), isMain(c); ma != mc {
			return ma
		}
		return a.img.Start < c.img.Start
	})
	for _, u := range order {
		img := u.key.img
		m := &pprof.Mapping{
			ID:              uint64(len(b.p.Mapping) + 1),
			Start:           img.Start,
			Limit:           img.Limit,
			Offset:          img.Offset,
			File:            img.Path,
			BuildID:         img.BuildID,
			HasFunctions:    u.functions,
			HasFilenames:    u.files,
			HasLineNumbers:  u.lines,
			HasInlineFrames: u.inlined,
		}
		b.p.Mapping = append(b.p.Mapping, m)
		b.mappings[u.key] = m
	}
}

// location adds the pprof location of l.
func (b *pprofBuilder) location(l *location, pl *pprof.Location) *pprof.Location {
	*pl = pprof.Location{
		ID:      uint64(len(b.p.Location) + 1),
		Address: l.addr,
	}
	if l.img != nil {
		pl.Mapping = b.mappings[mapKey{l.proc, l.img}]
	}
	if l.symbolized() {
		start := len(b.lines)
		for _, f := range l.frames {
			if !f.Named() {
				continue
			}
			// An unnamed function with a known start is named
			// image+0xSTART, so that its addresses share one function.
			b.lines = append(b.lines, pprof.Line{Function: b.function(f.Name(), f.File), Line: int64(f.Line)})
		}
		pl.Line = b.lines[start:len(b.lines):len(b.lines)]
	}
	b.p.Location = append(b.p.Location, pl)
	return pl
}

// pseudoLocation adds a location with no address that names a pseudo
// function.
func (b *pprofBuilder) pseudoLocation(name string) *pprof.Location {
	pl := &pprof.Location{
		ID:   uint64(len(b.p.Location) + 1),
		Line: []pprof.Line{{Function: b.function(name, "")}},
	}
	b.p.Location = append(b.p.Location, pl)
	return pl
}

// function returns the deduplicated function named name in file. Control
// characters in either (which no real symbol has, but a hostile image can)
// become spaces, so that pprof's text reports keep one function per line.
func (b *pprofBuilder) function(name, file string) *pprof.Function {
	name, file = printable(name), printable(file)
	k := funcKey{name, file}
	if f := b.functions[k]; f != nil {
		return f
	}
	f := &pprof.Function{
		ID:         uint64(len(b.p.Function) + 1),
		Name:       name,
		SystemName: name,
		Filename:   file,
	}
	b.p.Function = append(b.p.Function, f)
	b.functions[k] = f
	return f
}

// printable replaces ASCII control characters with spaces.
func printable(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return strings.Map(func(r rune) rune {
				if r < 0x20 || r == 0x7f {
					return ' '
				}
				return r
			}, s)
		}
	}
	return s
}
