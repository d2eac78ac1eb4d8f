package exporter

import (
	"testing"
	"time"

	"github.com/macprof/macprof/images"
	"github.com/macprof/macprof/profile"
)

// TestMappingFlagsPadding checks that one address outside every function
// of an image (padding at fakeLib.Start+0x50, below its first symbol)
// does not switch the mapping's flags off, and that a mapping none of
// whose addresses is named has none of them.
func TestMappingFlagsPadding(t *testing.T) {
	other := &images.Image{Path: "/fake/nosyms.so", BuildID: "ff", Format: images.FormatELF, Start: 0x7f1000000000, Limit: 0x7f1000001000}
	w := &profile.Window{
		Start: time.Unix(1700000000, 0), End: time.Unix(1700000010, 0),
		Period: 10 * time.Millisecond, Mode: profile.ModeCPU,
		Processes: []profile.Process{{PID: 9, Executable: fakeLib.Path, Images: images.NewSet([]*images.Image{fakeLib, other})}},
		Stacks: []profile.Stack{
			{PCs: []uint64{fakeLib.Start + 0x150}},                     // inlined, with lines
			{PCs: []uint64{fakeLib.Start + 0x50}},                      // padding: no function
			{PCs: []uint64{fakeLib.Start + 0x210}},                     // a function without lines
			{PCs: []uint64{other.Start + 0x10, fakeLib.Start + 0x211}}, // no symbols at all
		},
	}
	for i := range w.Stacks {
		w.Samples = append(w.Samples, profile.Sample{Stack: i, PID: 9, Thread: 1, Count: 1})
	}
	p, err := Profile(w, newCache(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Mapping {
		switch m.File {
		case fakeLib.Path:
			if !m.HasFunctions || !m.HasFilenames || !m.HasLineNumbers || !m.HasInlineFrames {
				t.Errorf("%s: %+v, want every flag set despite the padding address", m.File, m)
			}
		case other.Path:
			if m.HasFunctions || m.HasFilenames || m.HasLineNumbers || m.HasInlineFrames {
				t.Errorf("%s: %+v, want no flag (nothing was symbolized)", m.File, m)
			}
		default:
			t.Errorf("unexpected mapping %s", m.File)
		}
	}
	if len(p.Mapping) != 2 {
		t.Errorf("%d mappings, want 2", len(p.Mapping))
	}
}
