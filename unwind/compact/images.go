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

// Images is the set of a process's loaded images, sorted for lookup by PC:
// the unwind.Tables of a walk on a darwin target. It is built once per
// change of the image list; walks may run concurrently with BuildWanted,
// which fills in tables that walks asked for, so that tables are built
// lazily but never while a thread is stopped.
type Images struct {
	arch unwind.Arch // the walk's: a table of another is not used
	list []slot
	// rules holds Rule's answers by PC: a profile's return addresses
	// repeat from sample to sample, and a hit costs a multiply and a
	// compare where a lookup costs two binary searches.
	rules *unwind.RuleCache
}

// NewImages sorts imgs by start, for walks of arch. Images with an empty
// range or a base above their start are dropped; overlapping ranges are
// an error.
func NewImages(arch unwind.Arch, imgs []Image) (*Images, error) {
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
	s := &Images{arch: arch, list: make([]slot, len(keep)), rules: new(unwind.RuleCache)}
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
