package mach

import (
	"time"

	"github.com/macprof/macprof/images"
)

// imageHits records which images a Target's samples hit, so that their
// symbols can be read while the task lives: xnu tears a task's memory down
// as it exits (osfmk/kern/task.c task_terminate_internal calls
// vm_map_terminate), after which no table can be read from it. A PC outside
// every known image (a library dlopen'ed since the list was read) has the
// list read again.
type imageHits struct {
	set *images.Set // the set pages indexes
	// pages maps a code page (pc >> 12) to its image, nil for none: a
	// direct-mapped cache, so that a capture's PCs cost a compare each.
	pages   [hitPages]hitPage
	seen    map[string]bool // the images handed out (by UUID, else path)
	pending []*images.Image // hit, not handed out yet
	unknown bool            // a PC outside every image since the last read
	readAt  time.Time       // when unknown PCs last had the list read
}

type hitPage struct {
	page  uint64
	img   *images.Image
	valid bool
}

// hitPages is the size of imageHits.pages (a power of two).
const hitPages = 256

// unknownReread is the least time between two reads of the image list for
// PCs outside every image (JIT code lies outside every image for good).
const unknownReread = 50 * time.Millisecond

// note records the images pcs lie in and reports whether one lies
// outside every image. It does not allocate once every page was seen.
func (h *imageHits) note(set *images.Set, pcs []uint64) (unknown bool) {
	if set == nil {
		if len(pcs) > 0 {
			h.unknown = true
		}
		return len(pcs) > 0
	}
	if set != h.set {
		h.set = set
		h.pages = [hitPages]hitPage{}
	}
	for _, pc := range pcs {
		pg := pc >> 12
		e := &h.pages[(pg^pg>>8)&(hitPages-1)]
		if e.valid && e.page == pg {
			continue
		}
		im := set.Lookup(pc)
		*e = hitPage{page: pg, img: im, valid: true}
		if im == nil {
			h.unknown, unknown = true, true
			continue
		}
		key := im.BuildID
		if key == "" {
			key = im.Path
		}
		if !h.seen[key] {
			if h.seen == nil {
				h.seen = make(map[string]bool)
			}
			h.seen[key] = true
			h.pending = append(h.pending, im)
		}
	}
	return unknown
}

// rereadUnknown reads the image list again when a PC lay outside every
// known image since the last read, at most every unknownReread, and
// reports whether the list changed. A read that fails (dyld's list in use
// while another dlopen adds to it) is tried again later: the pages already
// looked up are not noted as unknown again.
func (t *Target) rereadUnknown() bool {
	h := &t.hits
	if !h.unknown || t.closed || time.Since(h.readAt) < unknownReread {
		return false
	}
	h.readAt = time.Now()
	old := t.imgSet
	_, err := t.Images()
	h.unknown = err != nil
	return t.imgSet != old
}

// ImagesHit appends to dst the images the target's samples hit for the
// first time since the last call (target.ImageHitReporter), so that the
// caller can read their symbols while the task lives. The list is read
// again first when a sample's PC lay outside every known image and the
// capture could not read it (rereadUnknown).
func (t *Target) ImagesHit(dst []*images.Image) []*images.Image {
	t.calls.Lock()
	defer t.calls.Unlock()
	h := &t.hits
	t.rereadUnknown()
	dst = append(dst, h.pending...)
	clear(h.pending)
	h.pending = h.pending[:0]
	return dst
}
