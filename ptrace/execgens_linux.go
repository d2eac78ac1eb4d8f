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
// the program that took it, not those read last.

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
	case len(g.sets) == 0:
		g.sets = append(g.sets, cur)
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
