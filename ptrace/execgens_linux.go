//go:build linux && (amd64 || arm64)

package ptrace

import (
	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/unwind/cfi"
)

// The images of a target sampled thread by thread, one set per program its
// process ran: each thread's ring holds, in order with its samples, the
// kernel's record of an exec (a comm record marked as such), so a sample
// drained after its process exec'd is walked and named with the images of
// the program that took it, not those read last. A ring opened after an
// exec that no ring showed counts from that exec (openAfterExecs).

// execGens holds a target's image sets by the number of execs before them.
type execGens struct {
	seen int // the execs the rings showed
	sets []execImages
	last *images.Set // the set noteImages took last
	// next is a set read with an executable other than sets[seen]'s:
	// the process exec'd, and no ring showed it yet.
	next *execImages
}

// execImages is one program's images.
type execImages struct {
	set *images.Set
	exe string
	res *cfi.Resolver
}

// maxExecGens bounds the programs a target's samples are told apart by;
// later ones share the last.
const maxExecGens = 64

// noteImages takes set, just read, with res its tables' resolver and exe
// the process's executable: the current program's images, unless exe
// changed since (an exec no ring showed yet). The caller holds imgMu.
func (g *execGens) noteImages(set *images.Set, res *cfi.Resolver, exe func() string) {
	if set == g.last {
		return
	}
	g.last = set
	cur := execImages{set: set, exe: exe(), res: res}
	switch {
	case len(g.sets) <= g.seen:
		// The first set read of the program after seen execs (the
		// programs between, if any, had none read).
		for len(g.sets) < g.seen {
			g.sets = append(g.sets, execImages{})
		}
		g.sets, g.next = append(g.sets, cur), nil
	case len(g.sets) == g.seen+1 && g.sets[g.seen].exe == cur.exe:
		g.sets[g.seen] = cur // a library mapped or unmapped
	default:
		g.next = &cur
	}
}

// at returns the images after n execs, or a zero execImages when they are
// not known.
func (g *execGens) at(n int) execImages {
	if n >= 0 && n < len(g.sets) {
		return g.sets[n]
	}
	return execImages{}
}

// execImagesOf returns the images of the program that took a sample after
// n execs of t's process, noting an exec the target had not seen yet (the
// images are then those read since with a new executable, or read now).
// The caller holds hotMu.
func (t *Target) execImagesOf(n int) execImages {
	t.imgMu.Lock()
	g := &t.gens
	for g.seen < n && g.seen < maxExecGens {
		g.seen++
		if g.next != nil {
			g.sets, g.next = append(g.sets, *g.next), nil
		}
		if t.kernel != nil {
			t.kernel.execs.Store(int64(g.seen))
		}
	}
	have := len(g.sets) > n
	t.imgMu.Unlock()
	if !have && n > 0 && n == g.seen {
		// The exec's images were not read yet: read them now (Images
		// files them under the exec just seen). Before any exec, a
		// target whose images were never read walks without them.
		t.Images()
	}
	t.imgMu.Lock()
	defer t.imgMu.Unlock()
	return g.at(min(n, maxExecGens))
}

// currentProgram reports whether the images after n execs are those of the
// program the process runs now (as far as the rings and the last read of
// its images tell): a re-read of its memory map adds to them.
func (t *Target) currentProgram(n int) bool {
	t.imgMu.Lock()
	defer t.imgMu.Unlock()
	return n == t.gens.seen && t.gens.next == nil
}

// ringOpenTries bounds the opens of one ring that an exec came in the
// middle of (openAfterExecs).
const ringOpenTries = 4

// openAfterExecs returns open (openPerfRing), made to file an exec that the
// process made before the ring opened and that no ring showed: the ring
// shows only the execs after it (their comm records), so its samples count
// from the program its process ran as it opened, which setRing takes from
// kernel.execs. The executable is read before the open and after it (the
// ring mapped): the same, no exec came between them, and one before the
// first read had replaced the process's memory by then, which the kernel
// does under the lock perf_event_open takes, so the ring cannot have its
// record; different, an exec came in the middle, and the ring may or may
// not show it: it is closed and opened again.
func (t *Target) openAfterExecs(open func(tid int, spec ringSpec) (*perfRing, bool, error)) func(tid int, spec ringSpec) (*perfRing, bool, error) {
	return func(tid int, spec ringSpec) (*perfRing, bool, error) {
		before := t.Executable()
		for try := 1; ; try++ {
			r, small, err := open(tid, spec)
			if err != nil {
				return r, small, err
			}
			after := t.Executable()
			if after == before || try == ringOpenTries {
				t.noteExecBefore(after)
				return r, small, nil
			}
			r.close()
			before = after
		}
	}
}

// noteExecBefore files the exec that made exe the process's executable if
// no ring showed it yet: the target counts it (kernel.execs) and its images
// are the set read since with that executable, or read afresh when a sample
// needs them (execImagesOf). An exec that leaves the executable as it was is
// not told apart here (a re-read of the images replaces the program's). The
// caller holds hotMu.
func (t *Target) noteExecBefore(exe string) {
	if exe == "" || t.kernel == nil {
		return
	}
	t.imgMu.Lock()
	defer t.imgMu.Unlock()
	g := &t.gens
	if g.seen >= len(g.sets) || g.seen >= maxExecGens || g.sets[g.seen].exe == exe {
		// Unknown before (no images read yet), or the same program.
		return
	}
	g.seen++
	if g.next != nil && g.next.exe == exe {
		g.sets, g.next = append(g.sets, *g.next), nil
	} else {
		// None read since, or those of a program between: the next
		// read builds a set afresh, which noteImages files as this
		// program's.
		g.next = nil
		t.imgSig, t.imgVM = nil, 0
	}
	t.kernel.execs.Store(int64(g.seen))
}
