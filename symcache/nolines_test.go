package symcache

import (
	"testing"

	"github.com/macprof/macprof/images"
)

// countingLines is a LineSource that counts its lookups and answers with
// an inlined call and a line.
type countingLines struct{ calls int }

func (l *countingLines) Lines(addr uint64) []Frame {
	l.calls++
	return []Frame{{Function: "inlined", File: "a.c", Line: 3, Inlined: true}, {File: "a.c", Line: 9}}
}

// TestNoLinesReadsNoLines: with NoLines a frame is its function's name and
// offset only, and the object's line source is never asked (reading DWARF
// is most of a snapshot's time); without it, the same address gives the
// inlined call and the lines.
func TestNoLinesReadsNoLines(t *testing.T) {
	img := &images.Image{Path: "/nonexistent/obj", BuildID: "0123456789abcdef", Format: images.FormatELF, Start: 0x10000, Limit: 0x20000}
	for _, noLines := range []bool{true, false} {
		lines := &countingLines{}
		c := New(Options{NoLines: noLines, Loaders: map[images.Format]Loader{images.FormatELF: func(*images.Image) (*Table, error) {
			return NewTable("obj", []Symbol{{Name: "outer", Start: 0x100, Size: 0x100}}, nil, lines), nil
		}}})
		fr := c.Symbolize(img, 0x10110, false)
		switch {
		case noLines && (len(fr) != 1 || fr[0].Function != "outer" || fr[0].Offset != 0x10 || fr[0].File != "" || fr[0].Line != 0 || lines.calls != 0):
			t.Errorf("NoLines: frames %+v, line lookups %d; want outer+0x10 alone and no lookup", fr, lines.calls)
		case !noLines && (len(fr) != 2 || !fr[0].Inlined || fr[1].Function != "outer" || fr[1].Line != 9 || lines.calls != 1):
			t.Errorf("with lines: frames %+v, line lookups %d; want the inlined call, then outer at a.c:9", fr, lines.calls)
		}
	}
}
